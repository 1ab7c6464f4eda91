package org.hybridlb.standalone.frr;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.RouteSource;
import org.hybridlb.standalone.Fabric;
import org.hybridlb.standalone.Proc;

/**
 * The live SMux set from the fabric's route server: an SMux is live while its BGP peer address
 * ({@code bgpPeer}, else its {@code ip}) is the peer of a valid path for some prefix in the route
 * server's RIB (the SMux hosts announce only the VIP aggregates, and withdraw them when the SMux
 * is unhealthy). Polled with {@code vtysh --vty_socket <vtyDir> -c 'show bgp ipv4 unicast json'}.
 *
 * <p>A route server that has just restarted has an empty RIB until the SMuxes' sessions come back
 * and their announcements arrive (seconds): that is not "every SMux is dead" (the controller would
 * remove every aggregate route and black-hole the SMux VIPs). A session comes up before its routes
 * do, so "no session is up" is not enough to tell: the route server restarted when none of its
 * Established sessions has been up since the last reading of its RIB (none survived). Then the
 * last set is kept until every SMux of it is back in the RIB, for up to {@link #RESTART_GRACE};
 * after that its RIB is taken as it is. A loss while a session older than the last reading is up
 * (an SMux withdrew, or its own session dropped) is taken at once.
 */
public class FrrRouteSource implements RouteSource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(FrrRouteSource.class.getName());

    private final Fabric fabric;
    private final Proc proc;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-routes");
        t.setDaemon(true);
        return t;
    });
    static final int FIRST_READ_TRIES = 10;
    /** How long SMuxes may take to reconnect to a restarted route server (~5 hold times of 3 s). */
    static final Duration RESTART_GRACE = Duration.ofSeconds(15);

    private final Duration restartGrace;
    /** When the route server was first seen restarted (System.nanoTime), or 0. */
    private long restartSince;
    /** When the RIB was last read (System.nanoTime), or 0: never. */
    private long lastRead;

    private volatile Set<String> live = Set.of();
    private volatile EventSink sink;
    private boolean warned;

    public FrrRouteSource(Fabric fabric, long timeoutMillis) {
        this(fabric, timeoutMillis, RESTART_GRACE);
    }

    FrrRouteSource(Fabric fabric, long timeoutMillis, Duration restartGrace) {
        this.fabric = fabric;
        this.proc = new Proc(Map.of(), timeoutMillis);
        this.restartGrace = restartGrace;
    }

    /**
     * Reads the RIB once before returning, so that the controller's first reconcile sees the real
     * live set: an unreadable RIB would look like "no SMux is live", and the controller removes
     * the aggregate routes when none is. The first reading is retried up to {@code
     * FIRST_READ_TRIES} times, one interval apart; after that the daemon starts with an empty set
     * (logged) and the poller takes over.
     */
    public void start(Duration interval) {
        long ms = interval.toMillis();
        // (a fabric without a route server has nothing to wait for)
        for (int i = 1; !poll() && fabric.vtyDir != null && i < FIRST_READ_TRIES; i++) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        poller.scheduleWithFixedDelay(this::poll, ms, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }

    @Override
    public Set<String> liveSmuxes() {
        return live;
    }

    @Override
    public void subscribe(EventSink sink) {
        this.sink = sink;
    }

    /** Reads the RIB and reports a changed live set; false when the RIB could not be read. */
    boolean poll() {
        Set<String> now;
        try {
            long t = System.nanoTime();
            now = liveFrom(RibParser.announcers(readRib()));
            boolean keep = false;
            if (now.containsAll(live)) {
                restartSince = 0;
            } else {
                keep = restarting(t, now);
            }
            lastRead = t;
            if (keep) {
                return true;
            }
            if (warned) {
                LOG.info("route server RIB readable again");
            }
            warned = false;
        } catch (RuntimeException e) {
            if (!warned) {
                LOG.warning("cannot read the route server RIB (keeping the last SMux set " + live + "): " + e.getMessage());
                warned = true;
            }
            return false;
        }
        if (!now.equals(live)) {
            LOG.info("live SMuxes " + live + " -> " + now);
            live = Set.copyOf(now);
            EventSink s = sink;
            if (s != null) {
                s.smuxesChanged(now);
            }
        }
        return true;
    }

    /**
     * SMuxes left the RIB (read at {@code t}): true while that is a restarted route server's
     * table still filling up (no session survived since the last reading; within the grace), so
     * that the last set is kept; logged once per restart.
     */
    private boolean restarting(long t, Set<String> now) {
        if (restartSince == 0) {
            long sinceLastRead = lastRead == 0 ? Long.MAX_VALUE : t - lastRead;
            if (RibParser.establishedUptimes(readSummary()).values().stream()
                    .anyMatch(ms -> TimeUnit.MILLISECONDS.toNanos(ms) >= sinceLastRead)) {
                return false;   // a session outlived the last reading: the route server did not restart
            }
            restartSince = t;
            LOG.warning("route server restarted (no BGP session of it is older than its last reading): keeping the live"
                    + " SMuxes " + live + " for up to " + restartGrace.toSeconds() + " s while they reconnect and announce");
        }
        if (t - restartSince < restartGrace.toNanos()) {
            return true;
        }
        restartSince = 0;
        LOG.warning("SMuxes of " + live + " still missing from the restarted route server's RIB after "
                + restartGrace.toSeconds() + " s: taking its RIB as it is " + now);
        return false;
    }

    String readSummary() {
        return proc.run(List.of("vtysh", "--vty_socket", fabric.vtyDir.toString(), "-c",
                "show bgp ipv4 unicast summary json"), null);
    }

    String readRib() {
        if (fabric.vtyDir == null) {
            throw new IllegalStateException("fabric.json has no routeServer.vtyDir");
        }
        Path dir = fabric.vtyDir;
        return proc.run(List.of("vtysh", "--vty_socket", dir.toString(), "-c", "show bgp ipv4 unicast json"), null);
    }

    /** SMux ids whose peer address announces at least one prefix. */
    Set<String> liveFrom(Map<String, Set<String>> announcers) {
        Set<String> peers = new TreeSet<>();
        announcers.values().forEach(peers::addAll);
        Set<String> out = new TreeSet<>();
        for (Fabric.SmuxInfo m : fabric.smuxes.values()) {
            String peer = m.bgpPeer != null ? m.bgpPeer : m.ip;
            if (peers.contains(peer)) {
                out.add(m.id);
            }
        }
        return out;
    }
}
