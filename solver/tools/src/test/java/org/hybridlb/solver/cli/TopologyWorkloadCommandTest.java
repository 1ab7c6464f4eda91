package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TopologyWorkloadCommandTest {
    @TempDir
    Path dir;

    @Test
    void topologyKindsWriteValidFiles() throws IOException {
        CliRun ft = CliRun.of("topology", "fat-tree", "--k", "6", "--agg-core-gbps", "40",
                "--out", dir.resolve("ft.json").toString());
        assertEquals(0, ft.exit, ft.err);
        assertEquals("", ft.out, "the file holds the result, stdout stays empty");
        Topology fatTree = ModelIo.readTopology(dir.resolve("ft.json"));
        assertEquals(6 * 3 * 3, fatTree.hosts.size());
        assertEquals(6 * 3 * 3 + 6 * 3 * 3, fatTree.links.size());
        assertEquals(6 * 3 * 3, fatTree.links.stream().filter(l -> l.capacityBps == 40e9).count(), "Agg-Core at 40G");

        CliRun clos = CliRun.of("topology", "duet-clos", "--pods", "3", "--tors-per-pod", "4", "--aggs-per-pod", "2",
                "--cores", "4", "--hosts-per-tor", "5", "--tunnel-table", "64", "--agg-core-gbps", "100",
                "--out", dir.resolve("clos.json").toString());
        assertEquals(0, clos.exit, clos.err);
        Topology t = ModelIo.readTopology(dir.resolve("clos.json"));
        assertEquals(3 * 4 * 5, t.hosts.size());
        t.switches.forEach(s -> assertEquals(64, s.tables.tunnel));
        assertTrue(t.links.stream().anyMatch(l -> l.capacityBps == 100e9));
        assertTrue(clos.err.contains("tor=12"), clos.err);

        Path plain = dir.resolve("plain.txt");
        Files.writeString(plain, "x");
        assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(dir.resolve("clos.json")),
                "outputs get the same permissions as any new file (umask), not owner-only");

        CliRun tb = CliRun.of("topology", "testbed");
        assertEquals(0, tb.exit, tb.err);
        Topology testbed = ModelIo.parse(tb.out, "stdout", Schema.TOPOLOGY, Topology.class);
        assertEquals(10, testbed.switches.size());
        assertEquals(3, testbed.smuxes.size());
    }

    @Test
    void workloadWritesFilesThatReadBackAndAreReproducible() throws IOException {
        Path topo = dir.resolve("tb.json");
        assertEquals(0, CliRun.of("topology", "testbed", "--out", topo.toString()).exit);
        String[] args = {"workload", "--topology", topo.toString(), "--vips", dir.resolve("v1.json").toString(),
            "--traffic", dir.resolve("t1.json").toString(), "--seed", "9", "--vips-count", "150", "--intervals", "4",
            "--interval-seconds", "300", "--no-progress"};
        CliRun run = CliRun.of(args);
        assertEquals(0, run.exit, run.err);
        assertTrue(run.err.contains("150 VIPs"), run.err);
        Topology t = ModelIo.readTopology(topo);
        VipSet vips = ModelIo.readVips(dir.resolve("v1.json"));
        ModelChecks.checkVipsAgainstTopology(vips, t, "v1.json");
        TrafficTrace trace = ModelIo.readTraffic(dir.resolve("t1.json"), vips, t);
        assertEquals(4, trace.intervals.size());
        assertEquals(300, trace.intervals.get(1).startSeconds);

        args[4] = dir.resolve("v2.json").toString();
        args[6] = dir.resolve("t2.json").toString();
        assertEquals(0, CliRun.of(args).exit);
        assertEquals(Files.readString(dir.resolve("v1.json")), Files.readString(dir.resolve("v2.json")));
        assertEquals(Files.readString(dir.resolve("t1.json")), Files.readString(dir.resolve("t2.json")));
    }

    @Test
    void badOptionsExitTwoWithTheOptionNamedAndWriteNothing() {
        CliRun odd = CliRun.of("topology", "fat-tree", "--k", "5", "--out", dir.resolve("x.json").toString());
        assertEquals(2, odd.exit);
        assertTrue(odd.err.contains("--k") && odd.err.contains("even"), odd.err);
        assertFalse(Files.exists(dir.resolve("x.json")));

        CliRun noKind = CliRun.of("topology");
        assertEquals(2, noKind.exit);
        assertTrue(noKind.err.contains("fat-tree, duet-clos or testbed"), noKind.err);

        CliRun wiring = CliRun.of("topology", "duet-clos", "--wiring", "mesh");
        assertEquals(2, wiring.exit);
        assertTrue(wiring.err.contains("wiring") && wiring.err.contains("mesh"), wiring.err);

        CliRun smux = CliRun.of("topology", "testbed", "--smux-tor", "agg-0-0");
        assertEquals(2, smux.exit);
        assertTrue(smux.err.contains("--smux-tor") && smux.err.contains("agg-0-0"), smux.err);

        Path topo = dir.resolve("tb.json");
        assertEquals(0, CliRun.of("topology", "testbed", "--out", topo.toString()).exit);
        Path vips = dir.resolve("v.json");
        Path traffic = dir.resolve("t.json");
        CliRun share = CliRun.of("workload", "--topology", topo.toString(), "--vips", vips.toString(),
                "--traffic", traffic.toString(), "--internal-share", "1.2");
        assertEquals(2, share.exit);
        assertTrue(share.err.contains("--internal-share") && share.err.contains("between 0 and 1"), share.err);
        assertFalse(Files.exists(vips) || Files.exists(traffic), "no partial result");

        CliRun missing = CliRun.of("workload", "--topology", dir.resolve("nope.json").toString(),
                "--vips", vips.toString(), "--traffic", traffic.toString());
        assertEquals(2, missing.exit);
        assertTrue(missing.err.contains("nope.json") && missing.err.contains("file not found"), missing.err);

        CliRun required = CliRun.of("workload", "--topology", topo.toString());
        assertEquals(2, required.exit);
        assertTrue(required.err.contains("--vips") || required.err.contains("--traffic"), required.err);

        CliRun same = CliRun.of("workload", "--topology", topo.toString(), "--vips", vips.toString(),
                "--traffic", vips.toString());
        assertEquals(2, same.exit);
        assertTrue(same.err.contains("--traffic"), same.err);
    }

    @Test
    void helpExplainsEveryOption() {
        CliRun help = CliRun.of("workload", "--help");
        assertEquals(0, help.exit);
        for (String option : new String[] {"--topology", "--vips", "--traffic", "--seed", "--vips-count",
            "--intervals", "--interval-seconds", "--load", "--internal-share", "--[no-]progress"}) {
            assertTrue(help.out.contains(option), option + " missing from --help");
        }
        CliRun topo = CliRun.of("topology", "duet-clos", "--help");
        assertTrue(topo.out.contains("--pods") && topo.out.contains("default 40"), topo.out);
    }
}
