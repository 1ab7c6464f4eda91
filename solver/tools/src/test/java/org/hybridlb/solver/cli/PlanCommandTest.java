package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.topology.DuetTestbed;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class PlanCommandTest {
    @TempDir
    Path dir;

    private String out;
    private String err;

    private int run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        CommandLine cl = SolverCli.commandLine();
        cl.setOut(new PrintWriter(o));
        cl.setErr(new PrintWriter(e));
        int rc = cl.execute(args);
        out = o.toString();
        err = e.toString();
        return rc;
    }

    private Path write(String name, String json) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, json);
        return p;
    }

    @BeforeEach
    void files() throws Exception {
        Topology t = DuetTestbed.generate();
        ModelIo.write(dir.resolve("topo.json"), t);
        List<Vip> vips = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            List<Dip> dips = new ArrayList<>();
            for (int d = 0; d < 3; d++) {
                dips.add(new Dip(t.hosts.get(i * 10 + d).ip, null, null));
            }
            vips.add(new Vip("100.64.0." + i, "100.64.0.0/20", List.of(new VipPort("any", 0, dips))));
        }
        ModelIo.write(dir.resolve("vips.json"), new VipSet(vips));
        // Hand-written assignments carry only what the schema requires.
        write("from.json", "{\"algorithm\":\"x\",\"assignment\":{\"100.64.0.1\":\"tor-0-0\",\"100.64.0.2\":\"smux\"}}");
        write("to.json", "{\"algorithm\":\"y\",\"assignment\":{\"100.64.0.1\":\"agg-1-0\",\"100.64.0.2\":\"tor-0-1\"}}");
    }

    /** --interval N is the interval whose index is N, as in assign (not the N-th one). */
    @Test
    void intervalNamesTheIndex() throws Exception {
        write("traffic.json", "{\"intervals\": [{\"index\": 5, \"vips\": [{\"vip\": \"100.64.0.1\","
                + " \"sources\": {\"internet\": 1000}}]}, {\"index\": 7, \"vips\": []}]}");
        String[] base = {"plan", "--topology", dir.resolve("topo.json").toString(), "--vips",
            dir.resolve("vips.json").toString(), "--from", dir.resolve("from.json").toString(), "--to",
            dir.resolve("to.json").toString(), "--traffic", dir.resolve("traffic.json").toString()};
        List<String> args = new ArrayList<>(List.of(base));
        args.addAll(List.of("--interval", "5"));
        assertEquals(0, run(args.toArray(new String[0])), err);
        args.set(args.size() - 1, "1");
        assertEquals(2, run(args.toArray(new String[0])));
        assertTrue(err.contains("no interval with index 1 (--interval); the trace has 2 intervals, indices 5..7"), err);
    }

    @Test
    void printsACheckedPlan() throws Exception {
        int rc = run("plan", "--topology", dir.resolve("topo.json").toString(), "--vips", dir.resolve("vips.json").toString(),
                "--from", dir.resolve("from.json").toString(), "--to", dir.resolve("to.json").toString());
        assertEquals(0, rc, err);
        MigrationPlan plan = ModelIo.parse(out, "stdout", Schema.MIGRATION_PLAN, MigrationPlan.class);
        assertTrue(plan.steps().stream().anyMatch(s -> s.action == StepAction.ANNOUNCE_ON_HMUX
                && "agg-1-0".equals(s.switchId)), out);
        assertTrue(err.contains("waves"), err);
    }

    @Test
    void unknownSwitchInTheTargetExitsTwoNamingFileAndField() throws Exception {
        write("to.json", "{\"algorithm\":\"y\",\"assignment\":{\"100.64.0.1\":\"tor-9-9\"}}");
        int rc = run("plan", "--topology", dir.resolve("topo.json").toString(), "--vips", dir.resolve("vips.json").toString(),
                "--from", dir.resolve("from.json").toString(), "--to", dir.resolve("to.json").toString());
        assertEquals(2, rc);
        assertEquals("", out);
        assertTrue(err.contains("to.json") && err.contains("/assignment/100.64.0.1") && err.contains("tor-9-9"), err);
    }

    @Test
    void targetThatOverfillsASwitchExitsTwo() throws Exception {
        Topology t = ModelIo.readTopology(dir.resolve("topo.json"));
        // Shrink every tunnel table to 4 entries: two 3-DIP VIPs cannot share a switch.
        List<org.hybridlb.solver.model.Switch> small = new ArrayList<>();
        t.switches.forEach(s -> small.add(new org.hybridlb.solver.model.Switch(s.id, s.role, s.pod,
                new org.hybridlb.solver.model.TableCapacity(100, 100, 4))));
        ModelIo.write(dir.resolve("small.json"), new Topology(t.name, small, t.links, t.hosts, t.smuxes));
        write("to.json", "{\"algorithm\":\"y\",\"assignment\":{\"100.64.0.1\":\"tor-0-1\",\"100.64.0.2\":\"tor-0-1\"}}");
        int rc = run("plan", "--topology", dir.resolve("small.json").toString(), "--vips", dir.resolve("vips.json").toString(),
                "--from", dir.resolve("from.json").toString(), "--to", dir.resolve("to.json").toString());
        assertEquals(2, rc);
        assertEquals("", out);
        assertTrue(err.contains("to.json") && err.contains("tunnel") && err.contains("tor-0-1"), err);
    }

    @Test
    void vipMissingFromTheConfigurationExitsTwo() throws Exception {
        write("from.json", "{\"algorithm\":\"x\",\"assignment\":{\"100.64.0.9\":\"tor-0-0\"}}");
        int rc = run("plan", "--topology", dir.resolve("topo.json").toString(), "--vips", dir.resolve("vips.json").toString(),
                "--from", dir.resolve("from.json").toString(), "--to", dir.resolve("to.json").toString());
        assertEquals(2, rc);
        assertEquals("", out);
        assertTrue(err.contains("from.json: /assignment/100.64.0.9"), err);
    }

    @Test
    void handWrittenAssignmentParses() {
        Assignment a = ModelIo.parse("{\"algorithm\":\"x\",\"assignment\":{\"100.64.0.1\":\"smux\"}}", "a",
                Schema.ASSIGNMENT, Assignment.class);
        assertEquals(Map.of("100.64.0.1", "smux"), a.assignment);
    }
}
