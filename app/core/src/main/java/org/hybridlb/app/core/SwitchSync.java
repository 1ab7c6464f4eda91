package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Vip;

/**
 * The switches' side of the installed state: the intent every live switch should hold (its
 * entries for the VIPs it is HMux of, a route towards the HMux of every other installed VIP, each
 * installed VIP's aggregate routed to the live SMuxes, the fallback where the switch has one), what
 * each switch holds as far as the last reading and the deltas sent since say, and the deltas that
 * take one to the other. Down switches hold no intent and are neither read nor written. Loop thread only.
 */
final class SwitchSync {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(SwitchSync.class.getName());
    /** Which items of the intents a push brings in line. */
    enum Part {
        /** Aggregates and the fallback: the SMux side, written once the SMuxes know the VIPs. */
        AGGREGATES,
        /** HMux entries and routes. */
        ENTRIES_AND_ROUTES
    }

    private final HmuxProgrammer hmux;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    /** Per switch: the last reading, with every delta applied since. */
    private final Map<String, SwitchReading> known = new HashMap<>();

    SwitchSync(HmuxProgrammer hmux, StateKeeper keeper, BucketIds ids, FabricInputs inputs) {
        this.hmux = hmux;
        this.keeper = keeper;
        this.ids = ids;
        this.inputs = inputs;
    }

    /** The switches that are not down, in topology order. */
    List<String> liveSwitches() {
        List<String> out = new ArrayList<>();
        for (Switch s : inputs.topology().switches) {
            if (!inputs.down.contains(s.id)) {
                out.add(s.id);
            }
        }
        return out;
    }

    /** The intent each of {@code switches} should hold now, as the switch can hold it. */
    Map<String, SwitchIntent> desired(Collection<String> switches) {
        ControllerState state = keeper.state();
        Map<String, SwitchIntent.Builder> out = new LinkedHashMap<>();
        for (String sw : switches) {
            out.put(sw, SwitchIntent.builder());
        }
        List<String> smuxes = inputs.liveIds();
        for (Map.Entry<String, Vip> v : state.installedVips.entrySet()) {
            if (!smuxes.isEmpty()) { // an empty group would black-hole the aggregate
                out.values().forEach(b -> b.aggregates.computeIfAbsent(v.getValue().aggregate,
                        a -> new TreeSet<>(smuxes)));
            }
            List<String> at = new ArrayList<>(state.hmuxes.getOrDefault(v.getKey(), List.of()));
            at.removeAll(inputs.down);
            if (at.isEmpty()) {
                continue;
            }
            VipEntry e = ids.entry(v.getValue());
            Map<ServiceMatch, CookieDecode> cookies = v.getValue().cheetah() ? cookies(v.getValue(), state) : Map.of();
            for (String sw : at) {
                SwitchIntent.Builder b = out.get(sw);
                if (b != null) {
                    for (ServiceEntry s : e.ports) {
                        ServiceMatch m = new ServiceMatch(e.vip, s.proto, s.port);
                        b.entry(m, HmuxLayout.hmuxBuckets(s.dips));
                        if (cookies.containsKey(m)) {
                            b.cookies(m, cookies.get(m)); // dropped by holdable where the switch cannot decode them
                        }
                    }
                }
            }
            String hmuxSwitch = at.get(0); // the placement (ControllerState#placement)
            out.forEach((sw, b) -> {
                if (!at.contains(sw)) {
                    b.route(v.getKey(), hmuxSwitch);
                }
            });
        }
        Map<String, SwitchIntent> result = new LinkedHashMap<>();
        out.forEach((sw, b) -> result.put(sw, hmux.capability(sw).holdable(b.build())));
        return result;
    }

    /**
     * How an HMux decodes the cookies of cheetah VIP {@code v}, per service: its hosts' mode and key,
     * and the server ids of the pool the SMuxes hold (drained DIPs included, so their connections stay).
     */
    private Map<ServiceMatch, CookieDecode> cookies(Vip v, ControllerState state) {
        String key = state.cookies.keys.get(v.vip);
        if (key == null) {
            throw new IllegalStateException("cheetah VIP " + v.vip + " has no cookie key yet");
        }
        Map<ServiceMatch, CookieDecode> out = new TreeMap<>();
        for (ServiceEntry s : ids.smuxEntry(v).ports) {
            Map<Integer, CookieDecode.Server> servers = new TreeMap<>();
            for (Bucket b : s.dips) {
                Integer id = state.cookies.serverIds.get(b.tunnelEndpoint());
                if (id != null) { // a host without an id has written no cookie
                    servers.merge(id, new CookieDecode.Server(b.tunnelEndpoint(), b.bucketId),
                            (x, y) -> x.bucket <= y.bucket ? x : y);
                }
            }
            out.put(new ServiceMatch(v.vip, s.proto, s.port), new CookieDecode(Cookie.modeOf(v), key, servers));
        }
        return out;
    }

    /** Reads {@code switches} and remembers what was read (a switch that could not be read is forgotten). */
    Map<String, SwitchReading> read(Collection<String> switches) {
        Map<String, SwitchReading> r = hmux.read(switches);
        for (String sw : switches) {
            SwitchReading x = r.get(sw);
            if (x == null) {
                r.put(sw, SwitchReading.failed("the southbound returned no reading"));
                known.remove(sw);
            } else if (x.ok()) {
                known.put(sw, x);
            } else {
                known.remove(sw);
            }
        }
        return r;
    }

    /** The deltas from {@code readings} (readable switches only) to the desired intents, empty ones left out. */
    Map<String, SwitchDelta> deltas(Map<String, SwitchReading> readings) {
        Map<String, SwitchIntent> want = desired(readings.keySet());
        Map<String, SwitchDelta> out = new LinkedHashMap<>();
        readings.forEach((sw, r) -> {
            if (r.ok()) {
                SwitchDelta d = IntentDiff.diff(want.get(sw), r);
                if (!d.isEmpty()) {
                    out.put(sw, d);
                }
            }
        });
        return out;
    }

    /**
     * Sends {@code deltas} in one batch. What is known follows: the switches that took theirs hold
     * the target now; after a failure every switch of the batch is read again before the next delta.
     */
    void apply(Map<String, SwitchDelta> deltas) {
        if (deltas.isEmpty()) {
            return;
        }
        try {
            hmux.apply(deltas);
        } catch (RuntimeException e) {
            deltas.keySet().forEach(known::remove);
            throw e;
        }
        deltas.forEach((sw, d) -> {
            SwitchReading k = known.get(sw);
            if (k != null) {
                known.put(sw, k.after(d));
            }
            if (d.withdrawTowards.isEmpty()) {
                LOG.info("programmed " + sw + ": " + d.summary());
            }
        });
    }

    /**
     * Brings {@code part} of every live switch in line with its desired intent, from what is known
     * (switches not known are read first); entries and routes in make-before-break phases
     * ({@link DeltaPhases}). Returns the deltas sent, by switch.
     */
    Map<String, SwitchDelta> push(Part part) {
        List<String> live = liveSwitches();
        List<String> unknown = new ArrayList<>();
        for (String sw : live) {
            if (!known.containsKey(sw)) {
                unknown.add(sw);
            }
        }
        Map<String, SwitchReading> readings = new LinkedHashMap<>();
        List<String> unreadable = new ArrayList<>();
        if (!unknown.isEmpty()) {
            read(unknown).forEach((sw, r) -> {
                if (!r.ok()) {
                    unreadable.add(sw + ": " + r.failure);
                }
            });
        }
        for (String sw : live) {
            SwitchReading k = known.get(sw);
            if (k != null) {
                readings.put(sw, k);
            }
        }
        Map<String, SwitchDelta> out = new LinkedHashMap<>();
        deltas(readings).forEach((sw, d) -> {
            SwitchDelta p = part == Part.AGGREGATES ? d.aggregatesOnly() : d.withoutAggregates();
            if (!p.isEmpty()) {
                out.put(sw, p);
            }
        });
        if (part == Part.AGGREGATES) {
            apply(out);
        } else {
            Map<String, SwitchIntent> held = new HashMap<>();
            readings.forEach((sw, r) -> held.put(sw, r.intent));
            for (Map<String, SwitchDelta> phase : DeltaPhases.of(out, held, inputs.topology(), live)) {
                apply(phase);
            }
        }
        if (!unreadable.isEmpty()) {
            throw new SouthboundException("cannot read switch " + String.join("; ", unreadable));
        }
        return out;
    }

    /**
     * Reads {@code switches} back and throws, naming the first difference, unless each holds its
     * desired intent (what it cannot hold for want of a path does not count).
     */
    void verify(Collection<String> switches) {
        List<String> live = new ArrayList<>(switches);
        live.removeAll(inputs.down);
        if (live.isEmpty()) {
            return;
        }
        Map<String, SwitchReading> r = read(live);
        for (String sw : live) {
            if (!r.get(sw).ok()) {
                throw new SouthboundException("switch " + sw + " cannot be read back: " + r.get(sw).failure);
            }
        }
        deltas(r).forEach((sw, d) -> {
            throw new SouthboundException(difference(sw, d));
        });
    }

    /**
     * The failover fast path: on every other live switch, every route towards {@code failed} goes
     * at once ({@code vips} are the VIPs it was HMux of), without reading anything first.
     */
    void withdraw(String failed, Collection<String> vips) {
        Map<String, SwitchDelta> deltas = new LinkedHashMap<>();
        for (String sw : liveSwitches()) {
            if (!sw.equals(failed)) {
                deltas.put(sw, SwitchDelta.withdraw(failed, vips));
            }
        }
        known.remove(failed);
        long t0 = System.nanoTime();
        apply(deltas);
        LOG.info(String.format(java.util.Locale.ROOT,
                "withdrew the VIP routes towards failed switch %s (%d VIPs) on %d switches in %.1f ms",
                failed, vips.size(), deltas.size(), (System.nanoTime() - t0) / 1e6));
    }

    /** What a verify found first, in the words of the installed state. */
    static String difference(String sw, SwitchDelta d) {
        if (!d.rewrite.isEmpty()) {
            Map.Entry<?, String> e = d.rewrite.entrySet().iterator().next();
            return "switch " + sw + " holds " + e.getKey() + " inconsistently: " + e.getValue();
        }
        if (!d.putEntries.isEmpty()) {
            ServiceMatch m = d.putEntries.firstKey();
            return "switch " + sw + " does not hold VIP " + m.vip + " as installed (service " + m.service() + ")";
        }
        if (!d.removeEntries.isEmpty()) {
            return "switch " + sw + " still holds VIP " + d.removeEntries.first().vip;
        }
        if (!d.putRoutes.isEmpty()) {
            String v = d.putRoutes.firstKey();
            return "switch " + sw + " does not route VIP " + v + " towards " + d.putRoutes.get(v);
        }
        if (!d.removeRoutes.isEmpty()) {
            return "switch " + sw + " still routes VIP " + d.removeRoutes.first();
        }
        if (!d.putAggregates.isEmpty()) {
            String a = d.putAggregates.firstKey();
            return "switch " + sw + " does not route aggregate " + a + " to SMuxes " + d.putAggregates.get(a);
        }
        if (!d.removeAggregates.isEmpty()) {
            return "switch " + sw + " still routes aggregate " + d.removeAggregates.first();
        }
        if (!d.foreign.isEmpty()) {
            return "switch " + sw + " holds " + d.foreign.first() + ", which no intent explains";
        }
        return "switch " + sw + (Boolean.TRUE.equals(d.fallback) ? " lacks" : " still has") + " the fallback";
    }
}
