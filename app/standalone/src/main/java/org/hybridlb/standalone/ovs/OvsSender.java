package org.hybridlb.standalone.ovs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.standalone.Fabric;

/**
 * Sends bundles to bridges and reads bridges, the bridges in parallel ({@code ovs-ofctl} mostly
 * waits for ovs-vswitchd: more processes than cores keep it busy). Each bundle is atomic: a bridge
 * that refuses one mod refuses all of it and is left as it was. Counts what it cost.
 */
public final class OvsSender implements AutoCloseable {
    /** What the southbound has cost so far (benchmark breakdown). */
    public static final class Counters {
        public long bundles;
        public long bundleLines;
        public double bundleMillis;
        public long reads;
        public double readMillis;

        Counters copy() {
            Counters c = new Counters();
            c.bundles = bundles;
            c.bundleLines = bundleLines;
            c.bundleMillis = bundleMillis;
            c.reads = reads;
            c.readMillis = readMillis;
            return c;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d bundles (%d mods, %.0f ms in ovs-ofctl), %d switch reads (%.0f ms)",
                    bundles, bundleLines, bundleMillis, reads, readMillis);
        }
    }

    /** One bridge's controller flows and groups, as dumped, or why it could not be read. */
    static final class Dump {
        final String flows;
        final String groups;
        final String error;

        Dump(String flows, String groups, String error) {
            this.flows = flows;
            this.groups = groups;
            this.error = error;
        }
    }

    private final Fabric fabric;
    private final Ovs ovs;
    private final ExecutorService pool = Executors.newFixedThreadPool(8, r -> {
        Thread t = new Thread(r, "hybridlb-ovs");
        t.setDaemon(true);
        return t;
    });
    private final Counters counters = new Counters();

    OvsSender(Fabric fabric, Ovs ovs) {
        this.fabric = fabric;
        this.ovs = ovs;
    }

    Counters counters() {
        synchronized (counters) {
            return counters.copy();
        }
    }

    /**
     * Sends each bridge its lines as one bundle, in parallel. Returns, by switch, why its bundle
     * failed (that switch is unchanged); empty when every one went through.
     */
    Map<String, String> send(Map<Fabric.SwitchInfo, List<String>> bundles) {
        Map<Fabric.SwitchInfo, Future<?>> fs = new LinkedHashMap<>();
        bundles.forEach((sw, lines) -> {
            if (!lines.isEmpty()) {
                fs.put(sw, pool.submit(() -> {
                    long t0 = System.nanoTime();
                    ovs.bundle(sw.bridge, lines);
                    synchronized (counters) {
                        counters.bundles++;
                        counters.bundleLines += lines.size();
                        counters.bundleMillis += (System.nanoTime() - t0) / 1e6;
                    }
                    return null;
                }));
            }
        });
        Map<String, String> failed = new LinkedHashMap<>();
        fs.forEach((sw, f) -> {
            try {
                await(f, "programming " + sw.id);
            } catch (SouthboundException e) {
                failed.put(sw.id, e.getMessage());
            }
        });
        return failed;
    }

    /** Dumps the controller flows and the groups of {@code switches}, in parallel. */
    Map<String, Dump> read(List<Fabric.SwitchInfo> switches) {
        Map<String, Future<Dump>> fs = new LinkedHashMap<>();
        for (Fabric.SwitchInfo sw : switches) {
            fs.put(sw.id, pool.submit(() -> {
                long t0 = System.nanoTime();
                Dump d = new Dump(ovs.dumpFlows(sw.bridge, fabric.cookie, fabric.cookieMask), ovs.dumpGroups(sw.bridge),
                        null);
                synchronized (counters) {
                    counters.reads++;
                    counters.readMillis += (System.nanoTime() - t0) / 1e6;
                }
                return d;
            }));
        }
        Map<String, Dump> out = new LinkedHashMap<>();
        fs.forEach((id, f) -> {
            try {
                out.put(id, await(f, "reading " + id));
            } catch (SouthboundException e) {
                out.put(id, new Dump(null, null, e.getMessage()));
            }
        });
        return out;
    }

    /** Runs {@code work} on each of {@code switches} in parallel and waits; returns the failures' messages. */
    List<String> each(List<Fabric.SwitchInfo> switches, java.util.function.Consumer<Fabric.SwitchInfo> work) {
        List<Future<?>> fs = new ArrayList<>();
        for (Fabric.SwitchInfo sw : switches) {
            fs.add(pool.submit(() -> work.accept(sw)));
        }
        List<String> failed = new ArrayList<>();
        for (Future<?> f : fs) {
            try {
                await(f, "");
            } catch (SouthboundException e) {
                failed.add(e.getMessage());
            }
        }
        return failed;
    }

    private static <T> T await(Future<T> f, String what) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException(what + ": interrupted");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw new SouthboundException(what + ": " + (c instanceof SouthboundException ? c.getMessage() : c), c);
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
