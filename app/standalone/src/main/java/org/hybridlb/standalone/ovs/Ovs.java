package org.hybridlb.standalone.ovs;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.standalone.Proc;

/**
 * The private Open vSwitch instance of the fabric, reached with the OVS command-line tools:
 * {@code ovs-ofctl -O OpenFlow15} on {@code unix:<rundir>/<bridge>.mgmt}, {@code ovs-vsctl} on
 * {@code <rundir>/db.sock}.
 */
public final class Ovs {
    private final Path rundir;
    private final Proc proc;

    public Ovs(Path rundir, long timeoutMillis) {
        this.rundir = rundir;
        this.proc = new Proc(Map.of("OVS_RUNDIR", rundir.toString()), timeoutMillis);
    }

    public Path rundir() {
        return rundir;
    }

    String target(String bridge) {
        return "unix:" + rundir.resolve(bridge + ".mgmt");
    }

    /** Applies flow and group mods ({@code flow ...} / {@code group ...} lines) as one atomic bundle. */
    public void bundle(String bridge, List<String> lines) {
        proc.run(List.of("ovs-ofctl", "-O", "OpenFlow15", "bundle", target(bridge), "-"),
                String.join("\n", lines) + "\n");
    }

    /** {@code dump-flows} restricted to {@code cookie/mask}, with counters. */
    public String dumpFlows(String bridge, long cookie, long mask) {
        return proc.run(List.of("ovs-ofctl", "-O", "OpenFlow15", "dump-flows", target(bridge),
                String.format("cookie=0x%x/0x%x", cookie, mask)), null);
    }

    public String dumpGroups(String bridge) {
        return proc.run(List.of("ovs-ofctl", "-O", "OpenFlow15", "dump-groups", target(bridge)), null);
    }

    public String ofctl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ovs-ofctl", "-O", "OpenFlow15"));
        for (String a : args) {
            cmd.add(a);
        }
        return proc.run(cmd, null);
    }

    /** Runs {@code ovs-vsctl} against this instance's database. */
    public String vsctl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ovs-vsctl", "--db=unix:" + rundir.resolve("db.sock"), "--timeout=5"));
        for (String a : args) {
            cmd.add(a);
        }
        return proc.run(cmd, null);
    }
}
