package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.PrismConfig;
import org.hybridlb.solver.model.PrismFrontend;
import org.hybridlb.solver.model.Vip;

/**
 * The Prism hand-off controller (ARCHITECTURE "Prism hand-off and Yoda rules"): every round it
 * compiles each Prism VIP's rule document, asks each of its front ends which rules it runs and
 * pushes the VIP's when they differ (a front end that restarted with its start-up file, or one that
 * was down, gets them again), and reads the front ends' hand-off counters and connections (who owns
 * each one now). A front end whose DIP the host agents report unhealthy is not asked. Rounds run on a
 * thread of their own, every period and when the VIPs change, so a slow front end never holds the
 * controller loop; the views are immutable snapshots of the last round.
 */
public final class PrismHandoff implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PrismHandoff.class.getName());
    /** How often the front ends are asked: a restarted front end runs the VIP's rules again within it. */
    public static final Duration PERIOD = Duration.ofSeconds(2);
    /** Most connections kept per front end for {@code GET /prism/{vip}/connections}. */
    static final int MAX_CONNECTIONS_SHOWN = 10000;

    private final PrismFrontEnds frontEnds;
    private final PrismPins pins;
    private final Supplier<List<Vip>> vips;
    private final Supplier<Collection<String>> unhealthyDips;
    private final Clock clock;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-prism");
        t.setDaemon(true);
        return t;
    });
    /** "vip ip admin" -> what the controller knows of that front end (round thread only). */
    private final Map<String, Seen> seen = new HashMap<>();
    private volatile Map<String, PrismVipView> views = Map.of();
    private volatile Map<String, List<PrismConnectionView>> connections = Map.of();

    /**
     * {@code vips}: the desired VIPs; {@code unhealthyDips}: DIPs the host agents (or a down switch)
     * make unhealthy. Both are read at the start of each round, from the round's thread.
     */
    public PrismHandoff(PrismFrontEnds frontEnds, Supplier<List<Vip>> vips, Supplier<Collection<String>> unhealthyDips,
                        Clock clock) {
        this(frontEnds, new PrismPins(FabricPins.NONE), vips, unhealthyDips, clock);
    }

    /** As above, with the fabric steering pins each round reconciles ({@link PrismPins#reconcile}). */
    public PrismHandoff(PrismFrontEnds frontEnds, PrismPins pins, Supplier<List<Vip>> vips,
                        Supplier<Collection<String>> unhealthyDips, Clock clock) {
        this.frontEnds = frontEnds;
        this.pins = pins;
        this.vips = vips;
        this.unhealthyDips = unhealthyDips;
        this.clock = clock;
    }

    /** Rounds every {@code period}, the first at once. */
    public void start(Duration period) {
        timer.scheduleWithFixedDelay(this::roundLogged, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A round soon (the VIPs changed). */
    public void wake() {
        try {
            timer.execute(this::roundLogged);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // closing: nothing to do
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** Each Prism VIP, by address. */
    public List<PrismVipView> views() {
        return new ArrayList<>(views.values());
    }

    /** The VIP's view; null when it is no Prism VIP or no round has seen it yet ({@link #pending}). */
    public PrismVipView view(String vip) {
        return views.get(vip);
    }

    /** The VIP's connections as its front ends reported them in the last round; null as for {@link #view}. */
    public List<PrismConnectionView> connections(String vip) {
        return connections.get(vip);
    }

    private void roundLogged() {
        try {
            round();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Prism round", e);
        }
    }

    /** One round (the timer's thread; tests call it directly). */
    public synchronized void round() {
        long start = clock.millis();
        List<Vip> all = vips.get();
        Map<String, Map<String, String>> handedOff = new HashMap<>();
        Set<String> down = Set.copyOf(unhealthyDips.get());
        Map<String, Seen> now = new HashMap<>();
        Map<String, PrismVipView> nextViews = new LinkedHashMap<>();
        Map<String, List<PrismConnectionView>> nextConns = new LinkedHashMap<>();
        for (Vip v : all) {
            if (v.prism == null) {
                continue;
            }
            JsonNode want = v.prism.ruleDocument();
            String text = Json.write(want);
            List<Seen> fes = new ArrayList<>();
            for (PrismFrontend fe : v.prism.frontends) {
                Seen s = seen.getOrDefault(v.vip + " " + fe.ip + " " + fe.admin, new Seen(fe));
                now.put(v.vip + " " + fe.ip + " " + fe.admin, s);
                fes.add(s);
                if (down.contains(fe.ip)) {
                    s.lost(PrismVipView.Frontend.HOST_DOWN, "the host agents report DIP " + fe.ip + " unhealthy");
                } else {
                    sync(v.vip, s, want, text);
                }
            }
            if (v.prism.fabricSteering()) {
                handedOff.put(v.vip, handedOff(fes));
            }
            nextViews.put(v.vip, view(v, fes, down));
            nextConns.put(v.vip, connections(fes));
        }
        pins.reconcile(all, down, handedOff, start);
        seen.clear();
        seen.putAll(now);
        views = nextViews;
        connections = nextConns;
    }

    /** The front end's rules made the VIP's; then its counters and connections read. */
    private void sync(String vip, Seen s, JsonNode want, String text) {
        try {
            if (!want.equals(frontEnds.rules(s.fe.admin))) {
                frontEnds.putRules(s.fe.admin, text);
                s.pushes++;
                s.lastPush = clock.instant().toString();
                LOG.info("Prism VIP " + vip + ": rules pushed to the front end " + s.fe.admin);
            }
            s.stats = frontEnds.stats(s.fe.admin);
            s.connections = frontEnds.connections(s.fe.admin);
            s.state = PrismVipView.Frontend.IN_SYNC;
            s.error = null;
        } catch (PrismFrontEnds.Refused e) {
            LOG.warning("Prism VIP " + vip + ": " + e.getMessage());
            s.lost(PrismVipView.Frontend.REFUSED, e.getMessage());
        } catch (SouthboundException e) {
            LOG.log(Level.FINE, "Prism VIP " + vip, e);
            s.lost(PrismVipView.Frontend.UNREACHABLE, e.getMessage());
        }
    }

    /** The view of a Prism VIP no round has seen yet: every front end {@code pending}. */
    public static PrismVipView pending(Vip v, Collection<String> unhealthyDips) {
        List<Seen> fes = new ArrayList<>();
        v.prism.frontends.forEach(fe -> fes.add(new Seen(fe)));
        return view(v, fes, Set.copyOf(unhealthyDips));
    }

    private static PrismVipView view(Vip v, List<Seen> fes, Set<String> down) {
        List<PrismVipView.Frontend> frontends = new ArrayList<>();
        for (Seen s : fes) {
            JsonNode st = s.stats;
            int inFlight = 0;
            for (JsonNode c : s.connections) {
                inFlight += "reading".equals(c.path("state").asText()) ? 0 : 1;
            }
            frontends.add(new PrismVipView.Frontend(s.fe.ip, s.fe.admin, s.state, s.error, s.pushes, s.lastPush,
                    st.path("connections").asInt(), inFlight, st.path("handoffs").asLong(),
                    st.path("returns").asLong(), st.path("client_resets").asLong(),
                    st.path("handoff_timeouts").asLong()));
        }
        List<PrismVipView.Backend> backends = new ArrayList<>();
        PrismConfig p = v.prism;
        for (Iterator<Map.Entry<String, JsonNode>> it = p.backends().fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> b = it.next();
            String address = b.getValue().path("address").asText();
            int upAt = 0;
            int owned = 0;
            long handoffs = 0;
            for (Seen s : fes) {
                JsonNode seenB = s.stats.path("backends").path(b.getKey());
                // a front end's counters name the backend by name, for its address now
                if (address.equals(seenB.path("address").asText())) {
                    upAt += seenB.path("up").asBoolean() ? 1 : 0;
                    owned += seenB.path("owned").asInt();
                    handoffs += seenB.path("handoffs").asLong();
                }
            }
            backends.add(new PrismVipView.Backend(b.getKey(), address, b.getValue().path("controlPort").asInt(),
                    !down.contains(address), upAt, owned, handoffs));
        }
        return new PrismVipView(v.vip, frontends, backends);
    }

    /** client "ip:port" -> the backend address that holds it, from every front end; null unless all were read. */
    private static Map<String, String> handedOff(List<Seen> fes) {
        Map<String, String> out = new HashMap<>();
        for (Seen s : fes) {
            if (!PrismVipView.Frontend.IN_SYNC.equals(s.state)) {
                return null;
            }
            for (JsonNode c : s.connections) {
                if (!"frontend".equals(c.path("owner").asText())) {
                    out.put(c.path("client").asText(), c.path("owner").asText());
                }
            }
        }
        return out;
    }

    private static List<PrismConnectionView> connections(List<Seen> fes) {
        List<PrismConnectionView> out = new ArrayList<>();
        for (Seen s : fes) {
            int n = 0;
            for (JsonNode c : s.connections) {
                if (n++ == MAX_CONNECTIONS_SHOWN) {
                    break;
                }
                out.add(new PrismConnectionView(s.fe.ip, c.path("id").asLong(), c.path("client").asText(),
                        c.path("state").asText(), c.path("owner").asText(), c.path("requests").asLong()));
            }
        }
        return List.copyOf(out);
    }

    /** A front end of a VIP as the last round saw it. */
    private static final class Seen {
        final PrismFrontend fe;
        String state = PrismVipView.Frontend.PENDING;
        String error;
        long pushes;
        String lastPush;
        JsonNode stats = Json.MAPPER.createObjectNode();
        JsonNode connections = Json.MAPPER.createArrayNode();

        Seen(PrismFrontend fe) {
            this.fe = fe;
        }

        /** Not in touch: its counters and connections are unknown now. */
        void lost(String why, String message) {
            state = why;
            error = message;
            stats = Json.MAPPER.createObjectNode();
            connections = Json.MAPPER.createArrayNode();
        }
    }
}
