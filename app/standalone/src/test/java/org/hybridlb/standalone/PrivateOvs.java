package org.hybridlb.standalone;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.hybridlb.standalone.ovs.Ovs;
import org.junit.jupiter.api.Assumptions;

/**
 * A private Open vSwitch for tests: ovsdb-server and ovs-vswitchd with their own run/db/log
 * directory under /run/hlb (or /tmp), inside a network namespace {@code hlbd<pid>x<n>} when
 * namespaces can be made, bridges with {@code datapath_type=netdev}. {@link #close} stops both
 * daemons by PID and removes the namespace and the directory.
 */
public final class PrivateOvs implements AutoCloseable {
    private static final AtomicInteger SEQ = new AtomicInteger();

    public final Path dir;
    public final String netns;
    public final Ovs ovs;
    private final Proc proc;

    private PrivateOvs(Path dir, String netns) {
        this.dir = dir;
        this.netns = netns;
        this.proc = new Proc(Map.of("OVS_RUNDIR", dir.toString(), "OVS_DBDIR", dir.toString(),
                "OVS_LOGDIR", dir.toString()), 10_000);
        this.ovs = new Ovs(dir, 10_000);
    }

    public static boolean installed() {
        return Files.isExecutable(Path.of("/usr/sbin/ovs-vswitchd")) && Files.isExecutable(Path.of("/usr/bin/ovs-ofctl"));
    }

    /** Starts one, or skips the calling test when Open vSwitch is not installed. */
    public static PrivateOvs start() throws IOException {
        Assumptions.assumeTrue(installed(), "Open vSwitch (ovs-vswitchd, ovs-ofctl) is not installed: "
                + "install openvswitch-switch (smux/install-deps.sh) to run the OVS tests");
        String tag = "hlbd" + ProcessHandle.current().pid() + "x" + SEQ.incrementAndGet();
        Path base = Files.isWritable(Path.of("/run")) ? Path.of("/run/hlb") : Path.of(System.getProperty("java.io.tmpdir"));
        Files.createDirectories(base);
        Path dir = Files.createDirectories(base.resolve(tag));
        Proc plain = new Proc(Map.of(), 10_000);
        String ns = plain.runAllowingFailure(List.of("ip", "netns", "add", tag), null).exit == 0 ? tag : null;
        PrivateOvs o = new PrivateOvs(dir, ns);
        try {
            o.proc.run(List.of("ovsdb-tool", "create", dir.resolve("conf.db").toString(),
                    "/usr/share/openvswitch/vswitch.ovsschema"), null);
            o.proc.run(o.inNs("ovsdb-server", dir.resolve("conf.db").toString(),
                    "--remote=punix:" + dir.resolve("db.sock"), "--pidfile=" + dir.resolve("ovsdb-server.pid"),
                    "--unixctl=" + dir.resolve("ovsdb-server.ctl"), "--detach", "--no-chdir",
                    "--log-file=" + dir.resolve("ovsdb-server.log")), null);
            o.ovs.vsctl("--no-wait", "init");
            o.proc.run(o.inNs("ovs-vswitchd", "unix:" + dir.resolve("db.sock"),
                    "--pidfile=" + dir.resolve("ovs-vswitchd.pid"), "--unixctl=" + dir.resolve("ovs-vswitchd.ctl"),
                    "--detach", "--no-chdir", "--log-file=" + dir.resolve("ovs-vswitchd.log")), null);
        } catch (RuntimeException e) {
            o.close();
            throw e;
        }
        return o;
    }

    private List<String> inNs(String... cmd) {
        List<String> out = new ArrayList<>();
        if (netns != null) {
            out.addAll(List.of("ip", "netns", "exec", netns));
        }
        out.addAll(List.of(cmd));
        return out;
    }

    private final AtomicInteger greKeys = new AtomicInteger();

    /**
     * A netdev bridge speaking OpenFlow 1.0-1.5 with a flow-based GRE port at {@code greOfport}
     * (its own GRE key, as in the emulation: one vswitchd takes only one flow-based GRE port per
     * set of tunnel options).
     */
    public void addBridge(String bridge, int greOfport) {
        ovs.vsctl("add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev",
                "protocols=OpenFlow10,OpenFlow13,OpenFlow14,OpenFlow15", "fail_mode=secure", "--",
                "add-port", bridge, bridge + "g", "--", "set", "interface", bridge + "g", "type=gre",
                "options:remote_ip=flow", "options:packet_type=legacy_l3", "options:key=" + greKeys.incrementAndGet(),
                "ofport_request=" + greOfport);
        String ofport = ovs.vsctl("get", "interface", bridge + "g", "ofport").strip();
        if (!String.valueOf(greOfport).equals(ofport)) {
            throw new IllegalStateException("GRE port of " + bridge + " got ofport " + ofport);
        }
    }

    /** An internal port (a "link" for liveness is any non-internal port: use {@link #addLink} for that). */
    public void addLink(String bridge, String port, int ofport) {
        // a veth pair inside the namespace; the peer stays up so only admin state decides
        Proc plain = new Proc(Map.of(), 10_000);
        List<String> ip = new ArrayList<>(netns != null ? List.of("ip", "netns", "exec", netns) : List.of());
        List<String> add = new ArrayList<>(ip);
        add.addAll(List.of("ip", "link", "add", port, "type", "veth", "peer", "name", port + "p"));
        plain.run(add, null);
        for (String p : List.of(port, port + "p")) {
            List<String> up = new ArrayList<>(ip);
            up.addAll(List.of("ip", "link", "set", p, "up"));
            plain.run(up, null);
        }
        ovs.vsctl("add-port", bridge, port, "--", "set", "interface", port, "ofport_request=" + ofport);
    }

    public String appctl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ovs-appctl", "-t", dir.resolve("ovs-vswitchd.ctl").toString()));
        cmd.addAll(List.of(args));
        return proc.run(cmd, null);
    }

    @Override
    public void close() {
        for (String d : List.of("ovs-vswitchd", "ovsdb-server")) {
            Path pid = dir.resolve(d + ".pid");
            try {
                long p = Long.parseLong(Files.readString(pid).strip());
                ProcessHandle.of(p).ifPresent(h -> {
                    h.destroy();
                    try {
                        h.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (Exception e) {
                        h.destroyForcibly();
                    }
                });
            } catch (IOException | NumberFormatException e) {
                // not started
            }
        }
        if (netns != null) {
            new Proc(Map.of(), 10_000).runAllowingFailure(List.of("ip", "netns", "del", netns), null);
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
