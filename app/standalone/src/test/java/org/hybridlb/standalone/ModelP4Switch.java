package org.hybridlb.standalone;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.p4.HmuxP4Layout;
import org.hybridlb.app.core.p4.P4Action;
import org.hybridlb.app.core.p4.P4Entity;
import org.hybridlb.app.core.p4.P4Update;
import org.hybridlb.app.core.p4.P4Value;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.standalone.p4rt.P4rtClient;
import org.hybridlb.standalone.p4rt.P4rtCodec;
import p4.v1.P4RuntimeOuterClass;

/**
 * The repository's P4 model switch (p4/switch/hlb_p4switch.py, real P4Runtime over gRPC) as a
 * process on a Unix socket in a test's directory, and the fabric's own share of it: the routes the
 * emulation writes (topologies/hlb_p4.py) with a lower election id than the controller's.
 */
final class ModelP4Switch implements AutoCloseable {
    static final Path REPO = repo();
    static final long FABRIC_ELECTION_ID = 1;

    final Path dir;
    final String address;
    private final Process process;

    ModelP4Switch(Path dir) throws IOException, InterruptedException {
        this.dir = dir;
        Path sock = dir.resolve("p4rt.sock");
        this.address = "unix:" + sock;
        ProcessBuilder pb = new ProcessBuilder("/usr/bin/python3", REPO.resolve("p4/switch/hlb_p4switch.py").toString(),
                "--grpc", address, "--device-id", "1");
        pb.environment().put("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python");
        pb.redirectErrorStream(true).redirectOutput(dir.resolve("p4switch.log").toFile());
        process = pb.start();
        long until = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(sock)) {
            if (!process.isAlive() || System.nanoTime() > until) {
                throw new IllegalStateException("hlb_p4switch did not start: " + Files.readString(dir.resolve("p4switch.log")));
            }
            Thread.sleep(50);
        }
    }

    /** The repository: the working directory (app/standalone under Maven, the root for bench.sh) or above it. */
    private static Path repo() {
        for (Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.exists(p.resolve("p4/switch/hlb_p4switch.py"))) {
                return p;
            }
        }
        throw new IllegalStateException("no p4/switch/hlb_p4switch.py above " + System.getProperty("user.dir"));
    }

    static Path p4info(String profile) {
        return REPO.resolve("p4/p4info/" + profile + ".p4info.txtpb");
    }

    static P4Action hop(int port, long dmac) {
        return P4Action.of(HlbP4Info.ROUTING_SET_NEXT_HOP, HlbP4Info.ROUTING_SET_NEXT_HOP_ID)
                .param(HlbP4Info.ROUTING_SET_NEXT_HOP_PORT_ID, HlbP4Info.ROUTING_SET_NEXT_HOP_PORT, P4Value.of(port))
                .param(HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC_ID, HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC, P4Value.of(0x0200000000aaL))
                .param(HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC_ID, HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC, P4Value.of(dmac)).build();
    }

    /**
     * Sets the pipeline and writes the fabric's routes as the emulation does: per other switch its
     * next id (a group of one hop on port = next id), and a /32 towards each of {@code hosts}
     * through the next id given.
     */
    void programFabric(String profile, Map<String, Integer> nextIds, Map<String, Integer> hosts) throws IOException {
        P4rtCodec codec = new P4rtCodec(P4rtCodec.loadP4Info(p4info(profile)));
        try (P4rtClient c = new P4rtClient(address, 1, FABRIC_ELECTION_ID, codec.p4info, 10_000)) {
            c.connect(); // sets the pipeline: the switch has none yet
            List<P4Entity> members = new java.util.ArrayList<>();
            List<P4Entity> groups = new java.util.ArrayList<>();
            List<P4Entity> entries = new java.util.ArrayList<>();
            long member = 1;
            for (int next : new java.util.TreeSet<>(nextIds.values())) {
                members.add(HmuxP4Layout.smuxMember(member, hop(next, 0x0200000000aaL)));
                groups.add(HmuxP4Layout.smuxGroup(next, List.of(member++)));
                entries.add(HmuxP4Layout.nextHopEntry(next, next, 0));
            }
            hosts.forEach((ip, next) -> entries.add(HmuxP4Layout.routeEntry(ip + "/32", next, 0)));
            for (List<P4Entity> batch : List.of(members, groups, entries)) {
                List<P4RuntimeOuterClass.Update> ups = new java.util.ArrayList<>();
                batch.forEach(e -> ups.add(codec.update(new P4Update(P4Update.Type.INSERT, e))));
                c.write(ups, P4RuntimeOuterClass.WriteRequest.Atomicity.CONTINUE_ON_ERROR);
            }
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
