package org.hybridlb.standalone.p4rt;

import static org.hybridlb.app.core.p4.HlbP4Info.*;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HmuxP4Config;
import org.hybridlb.app.core.p4.HmuxP4Layout;
import org.hybridlb.app.core.p4.HmuxP4Plan;
import org.hybridlb.app.core.p4.HmuxP4Reader;
import org.hybridlb.app.core.p4.HmuxP4Snapshot;
import org.hybridlb.app.core.p4.P4Diff;
import org.hybridlb.app.core.p4.P4Entity;
import org.hybridlb.app.core.p4.P4State;
import org.hybridlb.app.core.p4.P4Update;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.standalone.Fabric;
import p4.config.v1.P4InfoOuterClass;
import p4.v1.P4RuntimeOuterClass;

/**
 * The HMux southbound of hybridlbd for P4 switches (the fabric.json switches with a {@code "p4"}
 * object): the core's layer ({@code org.hybridlb.app.core.p4}) plans each switch's entities and
 * reads them back; this sends them over P4Runtime, one {@link P4rtClient} (one stream, this
 * controller's election id) per switch, the switches in parallel.
 *
 * <p>A delta becomes the entities of the switch's target intent, diffed against what the switch
 * was read to hold, in make-before-break batches ({@link P4Diff}: members, groups, entries; deletions
 * reversed). Each batch is one Write with the switch's atomicity ({@code dataplane-atomic} by
 * default: the batch is applied whole or not at all, and no packet sees half of it; P4Runtime lets a
 * server reorder updates inside a batch, so an entity and what refers to it are never in one). If a
 * batch is refused, the later ones are not sent and the switch is read again before its next change.
 *
 * <p>Every P4 switch selects by CRC32 over the 5-tuple (p4/HASH-SPEC.md), which the SMux's
 * {@code crc32} selection replicates, and keeps bucket ids but not DIPs (a member holds the tunnel
 * endpoint and the bucket). A switch running a Cheetah program ({@code profile} in fabric.json)
 * decodes crc32c cookies, the only mode its pipeline hashes ({@link HmuxP4Layout#cookieModes}): a
 * cheetah VIP's services are written with their key and server ids. The placement puts only the
 * cheetah VIPs whose hosts encode crc32c ({@code cookieHash}, {@code Cookie.modeOf}) on it; the
 * default siphash13 ones stay off P4 switches.
 */
public final class P4rtHmuxSouthbound implements HmuxProgrammer, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(P4rtHmuxSouthbound.class.getName());
    static final long DEADLINE_MS = 10_000;
    /** Updates per Write at most (gRPC's default 4 MiB message limit holds well over this many). */
    static final int MAX_WRITE = 2000;
    /** The tables and profiles a reading asks for (wildcard reads by id). */
    private static final int[] READ_TABLES = {HMUX_VIP_SERVICE_ID, HMUX_VIP_SERVICE_ANY_PORT_ID, HMUX_VIP_WHOLE_ID,
        HMUX_DIP_SELECT_ID, ROUTING_ROUTING_V4_ID, ROUTING_NEXT_HOP_ID};
    /** Read too where the program has them (a Cheetah one). */
    private static final int[] READ_COOKIE_TABLES = {CHEETAH_VIP_SERVERS_ID, CHEETAH_ALL_SERVERS_ID};
    private static final int[] READ_PROFILES = {HMUX_DIP_SELECTOR_ID, ROUTING_ECMP_SELECTOR_ID};

    /** Entities written and Write calls made, since start. */
    public static final class Counters {
        public final long updates;
        public final long writes;

        Counters(long updates, long writes) {
            this.updates = updates;
            this.writes = writes;
        }

        @Override
        public String toString() {
            return updates + " updates in " + writes + " writes";
        }
    }

    private final Map<String, Fabric.P4Switch> switches = new TreeMap<>();
    private final Map<String, P4rtClient> clients = new TreeMap<>();
    private final Map<String, P4rtCodec> codecs = new TreeMap<>();
    private final Map<String, HmuxP4Config> configs = new TreeMap<>();
    private final Map<String, HmuxP4Snapshot> snapshots = new ConcurrentHashMap<>();
    private final ExecutorService pool;
    private final AtomicLong updates = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();

    public P4rtHmuxSouthbound(Fabric fabric) {
        Map<String, Integer> nextIds = new TreeMap<>();
        Map<String, String> smuxes = new TreeMap<>();
        fabric.switches.values().forEach(s -> nextIds.put(s.id, s.p4 != null ? s.p4.nextId : s.location));
        fabric.smuxes.values().forEach(m -> smuxes.put(m.id, m.ip));
        Map<java.nio.file.Path, P4InfoOuterClass.P4Info> infos = new java.util.HashMap<>();
        for (Fabric.SwitchInfo s : fabric.switches.values()) {
            if (s.p4 == null) {
                continue;
            }
            P4InfoOuterClass.P4Info info = infos.computeIfAbsent(s.p4.p4info, P4rtHmuxSouthbound::load);
            switches.put(s.id, s.p4);
            codecs.put(s.id, new P4rtCodec(info));
            clients.put(s.id, new P4rtClient(s.p4.grpc, s.p4.deviceId, s.p4.electionId, info, DEADLINE_MS));
            configs.put(s.id, new HmuxP4Config(s.p4.encap, fabric.cookie, nextIds, smuxes));
        }
        pool = Executors.newFixedThreadPool(Math.max(1, Math.min(8, switches.size())), r -> {
            Thread t = new Thread(r, "hybridlb-p4rt");
            t.setDaemon(true);
            return t;
        });
    }

    private static P4InfoOuterClass.P4Info load(java.nio.file.Path file) {
        try {
            return P4rtCodec.loadP4Info(file);
        } catch (IOException | RuntimeException e) {
            throw new SouthboundException("cannot read the P4Info " + file + ": " + e.getMessage());
        }
    }

    /** Whether {@code switchId} is one of this southbound's. */
    public boolean handles(String switchId) {
        return switches.containsKey(switchId);
    }

    public Counters counters() {
        return new Counters(updates.get(), writes.get());
    }

    @Override
    public SwitchCapability capability(String switchId) {
        Fabric.P4Switch s = sw(switchId);
        // buckets by position: set_dip's bucket is the switch's counter index (BucketCounters)
        return new SwitchCapability(HashContract.of(HashContract.Selection.CRC32, 0, s.encap), false, false, false,
                HmuxP4Layout.cookieModes(s.profile));
    }

    @Override
    public synchronized Map<String, SwitchReading> read(Collection<String> switchIds) {
        Map<String, SwitchReading> out = new LinkedHashMap<>();
        parallel(switchIds, id -> {
            try {
                HmuxP4Snapshot s = readSwitch(id);
                snapshots.put(id, s);
                return s.reading;
            } catch (RuntimeException e) {
                snapshots.remove(id);
                return SwitchReading.failed(e.getMessage());
            }
        }).forEach(out::put);
        return out;
    }

    /** Everything of the HMux and routing tables and both profiles the switch holds, read back. */
    public HmuxP4Snapshot readSwitch(String id) {
        P4rtCodec codec = codecs.get(id);
        List<P4RuntimeOuterClass.Entity> filters = new ArrayList<>();
        List<Integer> tables = new ArrayList<>();
        Arrays.stream(READ_TABLES).forEach(tables::add);
        if (!HmuxP4Layout.cookieModes(sw(id).profile).isEmpty()) {
            Arrays.stream(READ_COOKIE_TABLES).forEach(tables::add);
        }
        for (int t : tables) {
            filters.add(P4RuntimeOuterClass.Entity.newBuilder().setTableEntry(
                    P4RuntimeOuterClass.TableEntry.newBuilder().setTableId(t)).build());
        }
        for (int p : READ_PROFILES) {
            filters.add(P4RuntimeOuterClass.Entity.newBuilder().setActionProfileMember(
                    P4RuntimeOuterClass.ActionProfileMember.newBuilder().setActionProfileId(p)).build());
            filters.add(P4RuntimeOuterClass.Entity.newBuilder().setActionProfileGroup(
                    P4RuntimeOuterClass.ActionProfileGroup.newBuilder().setActionProfileId(p)).build());
        }
        P4State device = new P4State();
        for (P4RuntimeOuterClass.Entity e : clients.get(id).read(filters)) {
            P4Entity x = codec.fromProto(e);
            if (x != null) {
                device.add(x);
            }
        }
        return new HmuxP4Reader(configs.get(id)).read(device);
    }

    @Override
    public synchronized void apply(Map<String, SwitchDelta> deltas) {
        Map<String, String> failed = new TreeMap<>();
        parallel(deltas.keySet(), id -> {
            try {
                applySwitch(id, deltas.get(id));
                return null;
            } catch (RuntimeException e) {
                snapshots.remove(id);
                return e.getMessage();
            }
        }).forEach((id, why) -> {
            if (why != null) {
                failed.put(id, why);
            }
        });
        failed.forEach((id, why) -> LOG.warning("programming P4 switch " + id + " failed: " + why));
        if (!failed.isEmpty()) {
            throw new SouthboundException(String.join("; ", failed.values()));
        }
    }

    private void applySwitch(String id, SwitchDelta d) {
        HmuxP4Snapshot now = snapshots.get(id);
        if (now == null) {
            now = readSwitch(id);
        }
        org.hybridlb.app.core.hmux.SwitchIntent target = d.target != null ? d.target : now.reading.intent.after(d);
        P4State want;
        try {
            want = new HmuxP4Plan(configs.get(id)).plan(target, now);
        } catch (IllegalArgumentException e) {
            throw new SouthboundException(id + ": " + e.getMessage());
        }
        List<List<P4Update>> batches = P4Diff.batches(now.ours, want);
        long t0 = System.nanoTime();
        int n = send(id, batches);
        snapshots.put(id, new HmuxP4Snapshot(now.reading.after(d), want, now.smuxHops));
        LOG.fine(String.format(Locale.ROOT, "%s: %d updates in %d writes, %.1f ms (%s)", id, n, batches.size(),
                (System.nanoTime() - t0) / 1e6, d.summary()));
    }

    /** Sends the batches in order, each one Write; returns the number of updates. */
    public int send(String id, List<List<P4Update>> batches) {
        P4rtCodec codec = codecs.get(id);
        P4RuntimeOuterClass.WriteRequest.Atomicity atomicity = P4RuntimeOuterClass.WriteRequest.Atomicity.valueOf(
                sw(id).atomicity.toUpperCase(Locale.ROOT).replace('-', '_'));
        int n = 0;
        for (List<P4Update> b : batches) {
            // a batch larger than one Write carries is split: its updates are of one rank and independent
            for (int from = 0; from < b.size(); from += MAX_WRITE) {
                List<P4RuntimeOuterClass.Update> ups = new ArrayList<>();
                b.subList(from, Math.min(b.size(), from + MAX_WRITE)).forEach(u -> ups.add(codec.update(u)));
                clients.get(id).write(ups, atomicity);
                writes.incrementAndGet();
                updates.addAndGet(ups.size());
                n += ups.size();
            }
        }
        return n;
    }

    private <T> Map<String, T> parallel(Collection<String> ids, java.util.function.Function<String, T> job) {
        Map<String, Future<T>> futures = new LinkedHashMap<>();
        for (String id : ids) {
            sw(id);
            futures.put(id, pool.submit(() -> job.apply(id)));
        }
        Map<String, T> out = new LinkedHashMap<>();
        futures.forEach((id, f) -> {
            try {
                out.put(id, f.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SouthboundException("interrupted");
            } catch (java.util.concurrent.ExecutionException e) {
                throw new SouthboundException(id + ": " + e.getCause());
            }
        });
        return out;
    }

    private Fabric.P4Switch sw(String switchId) {
        Fabric.P4Switch s = switches.get(switchId);
        if (s == null) {
            throw new SouthboundException("switch " + switchId + " is no P4 switch of the fabric");
        }
        return s;
    }

    @Override
    public void close() {
        pool.shutdownNow();
        clients.values().forEach(P4rtClient::close);
    }
}
