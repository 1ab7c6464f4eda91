package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.logging.Logger;
import org.hybridlb.app.core.view.AssignmentView.DipHealth;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * Which DIPs are out of their pools, and why: <b>failed</b> (the health source says so) or
 * <b>unreachable</b> (the switch their tunnel endpoint hangs off is down; its host agent answers
 * over the management network and would keep it in the pools: a black hole). Loop thread only.
 */
final class DipHealthView {
    private static final Logger LOG = Logger.getLogger(DipHealthView.class.getName());

    /** After a down switch's id in a sentence: how it is down (" is down", " counts as down: ..."). */
    private final java.util.function.Function<String, String> downReason;
    private Set<String> failed = new HashSet<>();
    /** Tunnel endpoints (host addresses) whose attachment switch is down, with that switch. */
    private Map<String, String> unreachableHosts = new HashMap<>();
    /** DIP -> its down switch, as last logged and reported. */
    private Map<String, String> unreachableDips = new TreeMap<>();

    DipHealthView(java.util.function.Function<String, String> downReason) {
        this.downReason = downReason;
    }

    /** A health event; returns whether it changed anything. */
    boolean report(String dip, boolean healthy) {
        return healthy ? failed.remove(dip) : failed.add(dip);
    }

    void replaceFailed(Set<String> dips) {
        failed = new HashSet<>(dips);
    }

    /**
     * Recomputes the unreachable DIPs: a DIP's attachment switch is the ToR of the topology host
     * that is its tunnel endpoint. Logs every change.
     */
    void refreshReachability(Set<String> down, Topology topology, List<Vip> desired) {
        Map<String, String> hosts = new HashMap<>();
        if (!down.isEmpty()) {
            for (Host h : topology.hosts) {
                if (h.tor != null && down.contains(h.tor)) {
                    hosts.put(h.ip, h.tor);
                }
            }
        }
        Map<String, String> dips = new TreeMap<>();
        if (!hosts.isEmpty()) {
            for (Vip v : desired) {
                for (VipPort p : v.ports) {
                    for (Dip d : p.dips) {
                        String sw = hosts.get(d.tunnelEndpoint());
                        if (sw != null) {
                            dips.put(d.ip, sw);
                        }
                    }
                }
            }
        }
        dips.forEach((dip, sw) -> {
            if (!sw.equals(unreachableDips.get(dip))) {
                LOG.warning("DIP " + dip + " unreachable: its switch " + sw + downReason.apply(sw));
            }
        });
        unreachableDips.forEach((dip, sw) -> {
            if (!dips.containsKey(dip)) {
                LOG.info("DIP " + dip + " reachable again: its switch " + sw + " is up");
            }
        });
        unreachableHosts = hosts;
        unreachableDips = dips;
    }

    /** The desired VIPs without their unhealthy DIPs: what the data path should serve. */
    Map<String, Vip> targetConfig(List<Vip> desired) {
        Map<String, Vip> out = new LinkedHashMap<>();
        for (Vip v : desired) {
            out.put(v.vip, VipConfigs.withoutDips(v,
                    d -> failed.contains(d.ip) || unreachableHosts.containsKey(d.tunnelEndpoint())));
        }
        return out;
    }

    /** Every unhealthy DIP, failed or unreachable, sorted. */
    List<String> unhealthyDips() {
        Set<String> all = new TreeSet<>(failed);
        all.addAll(unreachableDips.keySet());
        return new ArrayList<>(all);
    }

    /** Each unhealthy DIP with its state and why ({@code dipHealth} of {@code GET /assignment}). */
    Map<String, DipHealth> view() {
        Map<String, DipHealth> out = new TreeMap<>();
        for (String dip : failed) {
            out.put(dip, new DipHealth(DipHealth.FAILED, "its host agent reports it unhealthy or does not answer", null));
        }
        unreachableDips.forEach((dip, sw) -> out.put(dip, new DipHealth(DipHealth.UNREACHABLE, "its switch " + sw
                + downReason.apply(sw) + (failed.contains(dip) ? "; its host agent also reports it unhealthy" : ""), sw)));
        return out;
    }
}
