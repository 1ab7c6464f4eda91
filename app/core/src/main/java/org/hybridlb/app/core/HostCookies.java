package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.cheetah.CookieRegistry;
import org.hybridlb.app.core.cheetah.HostCookieDocs;
import org.hybridlb.app.core.cheetah.OwnerSlots;
import org.hybridlb.app.core.port.HostCookieControl;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * The Cheetah side of a round: server ids and keys brought in line with the VIPs
 * ({@link CookieRegistry}), then every host agent given its document ({@code PUT /cookie}) when it
 * changed, so that hosts encode before an SMux table that decodes their cookies is published.
 * Every VIP's hosts get their keys, cheetah or not (COOKIE-SPEC §9: encoding on before decoding).
 * An agent that runs without cookies, or cannot be reached, is an error only for a host of a
 * cheetah VIP (the SMuxes would drop its connections' segments as {@code bad_cookie}). Loop thread only.
 */
final class HostCookies {
    private static final Logger LOG = Logger.getLogger(HostCookies.class.getName());

    private final CookieRegistry registry = new CookieRegistry();
    private final OwnerSlots ownerSlots = new OwnerSlots();
    private final RetiringDips retiring = new RetiringDips(System::currentTimeMillis);
    private final HostCookieControl agents;
    private final SmuxControl smuxes;
    private final StateKeeper keeper;
    private final Status status;
    /** Host -> the document it last answered to: sent again only when it changes (or after a restart). */
    private final Map<String, String> sent = new HashMap<>();
    /** Hosts with an agent that has not yet taken its current document (refused, unreachable, no cookies). */
    private Set<String> unconfirmed = Set.of();
    /** "vip service dip" held at weight 0 by the last {@link #holdUnconfirmedJoiners}: logged when it changes. */
    private Set<String> held = Set.of();

    HostCookies(HostCookieControl agents, SmuxControl smuxes, StateKeeper keeper, Status status) {
        this.agents = agents;
        this.smuxes = smuxes;
        this.keeper = keeper;
        this.status = status;
    }

    /**
     * Ids and keys in line with the desired and installed VIPs, the DIPs removed from cheetah
     * VIPs draining ({@link RetiringDips}), stateful owner slots with the live SMuxes' addresses
     * ({@link OwnerSlots}); true when the state changed (persist it).
     */
    boolean allocate(Collection<String> liveSmuxIps) {
        ControllerState state = keeper.state();
        boolean drains = retiring.update(state.cookies, state.desired, state.installedVips);
        drains |= ownerSlots.update(state.cookies, liveSmuxIps);
        try {
            return registry.update(state.cookies, vips()) | drains;
        } catch (IllegalStateException e) {
            LOG.log(Level.WARNING, "Cheetah server ids", e);
            status.error(e.getMessage());
            return drains;
        }
    }

    /**
     * Every agent whose document changed gets it (call once the ids and keys are on disk);
     * {@code topology}: every SMux of the topology, {@code live}: the ids of the live ones (their
     * control URLs go into the documents: {@link HostCookieDocs}).
     */
    void push(List<Smux> topology, Set<String> live) {
        Set<String> reachable = agents.hosts();
        if (reachable.isEmpty()) {
            return;
        }
        Map<String, String> urlByIp = new HashMap<>();
        List<String> liveUrls = new ArrayList<>();
        for (Smux m : topology) {
            String url = HostCookieDocs.agentUrl(smuxes.controlUrl(m.id));
            if (url == null) {
                continue;
            }
            if (m.ip != null) {
                urlByIp.put(m.ip, url);
            }
            if (live.contains(m.id)) {
                liveUrls.add(url);
            }
        }
        push(vips(), reachable, urlByIp, liveUrls);
    }

    private List<Vip> vips() {
        ControllerState state = keeper.state();
        List<Vip> vips = new ArrayList<>(state.desired);
        vips.addAll(state.installedVips.values());
        return vips;
    }

    private void push(List<Vip> vips, Set<String> reachable, Map<String, String> urlByIp, List<String> liveUrls) {
        Map<String, String> docs;
        try {
            docs = HostCookieDocs.build(keeper.state().cookies, vips, urlByIp, liveUrls);
        } catch (IllegalStateException e) {
            status.error(e.getMessage());
            return;
        }
        Set<String> cheetahHosts = new TreeSet<>();
        for (Vip v : vips) {
            if (v.cheetah()) {
                for (VipPort p : v.ports) {
                    p.dips.stream().map(Dip::tunnelEndpoint).forEach(cheetahHosts::add);
                }
            }
        }
        sent.keySet().retainAll(docs.keySet());
        Set<String> waiting = new TreeSet<>();
        for (Map.Entry<String, String> e : docs.entrySet()) {
            String host = e.getKey();
            if (!reachable.contains(host) || e.getValue().equals(sent.get(host))) {
                continue;
            }
            waiting.add(host); // until it answers TAKEN below
            boolean needed = cheetahHosts.contains(host);
            try {
                if (agents.putCookies(host, e.getValue()) == HostCookieControl.Answer.TAKEN) {
                    sent.put(host, e.getValue());
                    waiting.remove(host);
                } else if (needed) {
                    status.error("host agent " + host + " runs without Cheetah cookies (no --cookie-config, or no XDP"
                            + " backend) but serves a cheetah VIP: the SMuxes drop its connections' segments as bad_cookie");
                } else {
                    sent.put(host, e.getValue()); // asked again when its document changes
                    LOG.fine("host agent " + host + " runs without Cheetah cookies");
                }
            } catch (SouthboundException ex) {
                LOG.log(needed ? Level.WARNING : Level.FINE, "Cheetah cookies of host " + host + ": " + ex.getMessage());
                if (needed) {
                    status.error("Cheetah cookies of host " + host + ": " + ex.getMessage());
                }
            }
        }
        unconfirmed = waiting;
    }

    /**
     * A DIP that joins a cheetah VIP (in {@code target}, not in the installed pool or there at weight 0) stays at weight 0
     * while its host's agent has not taken its current document: it would answer SYNs with no
     * cookie, or one under another key, and the SMuxes would drop the rest of those connections.
     * At weight 0 its id decodes and no new connection is sent to it; the next round that gets an
     * answer lets it in. A service keeps its desired weights when no DIP would be left with weight.
     */
    Map<String, Vip> holdUnconfirmedJoiners(Map<String, Vip> target) {
        Set<String> now = new TreeSet<>();
        if (!unconfirmed.isEmpty()) {
            Map<String, Vip> installed = keeper.state().installedVips;
            target.replaceAll((vip, v) -> v.cheetah() ? held(v, installed.get(vip), now) : v);
        }
        if (!now.equals(held)) {
            LOG.info(now.isEmpty() ? "every DIP joining a cheetah VIP has its cookies: none held at weight 0"
                    : "DIPs joining cheetah VIPs held at weight 0 until their host agents take their cookie documents: "
                    + now);
            held = now;
        }
        return target;
    }

    private Vip held(Vip want, Vip installed, Set<String> log) {
        List<VipPort> ports = new ArrayList<>();
        boolean changed = false;
        for (VipPort p : want.ports) {
            String service = VipConfigs.key(p);
            List<Dip> dips = new ArrayList<>();
            List<String> heldBack = new ArrayList<>();
            for (Dip d : p.dips) {
                Dip now = installed == null ? null : VipConfigs.dip(installed, service, d.ip);
                boolean joins = now == null || now.weight == 0; // held last round, or drained by the operator
                if (joins && d.weight > 0 && unconfirmed.contains(d.tunnelEndpoint())) {
                    dips.add(new Dip(d.ip, 0, d.hostIp));
                    heldBack.add(d.ip);
                } else {
                    dips.add(d);
                }
            }
            if (!heldBack.isEmpty() && dips.stream().anyMatch(d -> d.weight > 0)) {
                heldBack.forEach(ip -> log.add(want.vip + " " + service + " " + ip));
                ports.add(new VipPort(p.proto, p.port, dips));
                changed = true;
            } else {
                ports.add(p);
            }
        }
        return changed ? want.withPorts(ports) : want;
    }
}
