package org.hybridlb.standalone.ovs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.TopologySource;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.standalone.Fabric;

/**
 * The topology is the solver topology file named by fabric.json; switch liveness comes from OVS:
 * a switch is down when its bridge is missing, or when every one of its link interfaces (not
 * internal, not a tunnel) is administratively or operationally down — what
 * {@code ovs-ofctl mod-port <bridge> <port> down} on all its ports does. Read with one
 * {@code ovs-vsctl} call, every interval and at once whenever {@code ovsdb-client monitor} reports
 * an Interface change (so a failure is seen in milliseconds, not at the next poll); changes go to
 * the subscribed sink.
 */
public final class OvsTopologySource implements TopologySource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(OvsTopologySource.class.getName());
    private static final Set<String> NOT_LINKS = Set.of("internal", "gre", "vxlan", "geneve", "stt", "erspan",
            "ip6erspan", "ip6gre", "lisp", "gtpu", "bareudp", "srv6");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Fabric fabric;
    private final Ovs ovs;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-topology");
        t.setDaemon(true);
        return t;
    });
    private volatile Set<String> down = Set.of();
    private final java.util.concurrent.atomic.AtomicBoolean pollQueued = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile Process monitor;
    private volatile boolean closed;
    private volatile EventSink sink;
    private volatile java.util.function.Consumer<String> onDown = sw -> { };
    private boolean warned;

    public OvsTopologySource(Fabric fabric, Ovs ovs) {
        this.fabric = fabric;
        this.ovs = ovs;
    }

    /**
     * Reads liveness once now (so the controller starts with the truth), then on every change the
     * OVSDB monitor reports; polls every {@code interval} only as a safety net, at most every
     * {@value #MONITORED_POLL_MS} ms while the monitor runs (each poll is an ovs-vsctl process).
     */
    public void start(Duration interval) {
        poll();
        startMonitor();
        long ms = monitor != null ? Math.max(interval.toMillis(), MONITORED_POLL_MS) : interval.toMillis();
        poller.scheduleWithFixedDelay(this::poll, ms, ms, TimeUnit.MILLISECONDS);
    }

    static final long MONITORED_POLL_MS = 5_000;

    /** {@code ovsdb-client monitor} on the Interface table: every line it prints triggers a read now. */
    private void startMonitor() {
        ProcessBuilder pb = new ProcessBuilder("ovsdb-client", "--format=json", "monitor",
                "unix:" + ovs.rundir().resolve("db.sock"), "Open_vSwitch", "Interface", "name,admin_state,link_state");
        pb.environment().put("OVS_RUNDIR", ovs.rundir().toString());
        pb.redirectErrorStream(true);
        try {
            monitor = pb.start();
        } catch (IOException e) {
            LOG.warning("cannot start ovsdb-client monitor (liveness by polling only): " + e.getMessage());
            return;
        }
        Process p = monitor;
        Thread t = new Thread(() -> {
            try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(
                    p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
                while (r.readLine() != null) {
                    if (pollQueued.compareAndSet(false, true)) {
                        poller.execute(() -> {
                            pollQueued.set(false);
                            poll();
                        });
                    }
                }
            } catch (IOException | java.util.concurrent.RejectedExecutionException e) {
                // closing
            }
            if (!closed) {
                LOG.warning("ovsdb-client monitor exited; switch liveness by polling only");
            }
        }, "hybridlb-ovsdb-monitor");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        closed = true;
        Process p = monitor;
        if (p != null) {
            p.destroy();
        }
        poller.shutdownNow();
    }

    @Override
    public Topology topology() {
        return fabric.topology;
    }

    @Override
    public Set<String> downSwitches() {
        return down;
    }

    /** Runs at once when a switch goes down, before the controller hears of it (data-plane fast path). */
    public void onSwitchDown(java.util.function.Consumer<String> action) {
        this.onDown = action;
    }

    @Override
    public void subscribe(EventSink sink) {
        this.sink = sink;
    }

    void poll() {
        Set<String> now;
        try {
            now = readDown();
            warned = false;
        } catch (RuntimeException e) {
            if (!warned) {
                LOG.warning("cannot read switch liveness from OVS: " + e.getMessage());
                warned = true;
            }
            return;
        }
        Set<String> before = down;
        if (now.equals(before)) {
            return;
        }
        down = Set.copyOf(now);
        EventSink s = sink;
        for (String sw : now) {
            if (!before.contains(sw)) {
                LOG.warning("switch " + sw + " (" + fabric.switches.get(sw).bridge + ") is down");
                try {
                    onDown.accept(sw);
                } catch (RuntimeException e) {
                    LOG.warning("failover fast path for " + sw + ": " + e.getMessage());
                }
                if (s != null) {
                    s.switchDown(sw);
                }
            }
        }
        for (String sw : before) {
            if (!now.contains(sw)) {
                LOG.info("switch " + sw + " (" + fabric.switches.get(sw).bridge + ") is up");
                if (s != null) {
                    s.switchUp(sw);
                }
            }
        }
    }

    /** The switches that are down now, from one ovs-vsctl transaction. */
    Set<String> readDown() {
        String out = ovs.vsctl("--format=json", "--columns=name,ports", "list", "Bridge", "--",
                "--columns=_uuid,name", "list", "Port", "--",
                "--columns=name,type,admin_state,link_state,ofport", "list", "Interface");
        List<JsonNode> tables;
        try (MappingIterator<JsonNode> it = JSON.readerFor(JsonNode.class).readValues(out)) {
            tables = it.readAll();
        } catch (IOException e) {
            throw new IllegalStateException("unexpected ovs-vsctl output: " + e.getMessage(), e);
        }
        Map<String, String> portName = new HashMap<>();
        for (JsonNode row : tables.get(1).get("data")) {
            portName.put(row.get(0).get(1).asText(), row.get(1).asText());
        }
        Map<String, Boolean> ifaceUp = new HashMap<>();
        Map<String, Integer> ofport = new HashMap<>();
        Set<String> links = new HashSet<>();
        for (JsonNode row : tables.get(2).get("data")) {
            String name = row.get(0).asText();
            String type = row.get(1).asText();
            boolean up = "up".equals(row.get(2).asText()) && "up".equals(row.get(3).asText());
            ifaceUp.put(name, up);
            if (row.get(4).isNumber()) {
                ofport.put(name, row.get(4).asInt());
            }
            if (!NOT_LINKS.contains(type)) {
                links.add(name);
            }
        }
        Map<String, Set<String>> bridgePorts = new HashMap<>();
        for (JsonNode row : tables.get(0).get("data")) {
            Set<String> ports = new LinkedHashSet<>();
            JsonNode p = row.get(1);
            if ("set".equals(p.get(0).asText())) {
                for (JsonNode u : p.get(1)) {
                    ports.add(portName.get(u.get(1).asText()));
                }
            } else {
                ports.add(portName.get(p.get(1).asText()));
            }
            bridgePorts.put(row.get(0).asText(), ports);
        }
        Set<String> out2 = new TreeSet<>();
        for (org.hybridlb.solver.model.Switch t : fabric.topology.switches) {
            Fabric.SwitchInfo s = fabric.switches.get(t.id);
            if (s.p4 != null) {
                // no bridge, no port state over P4Runtime: down when every OVS port facing it is
                if (p4Down(s, bridgePorts, ofport, ifaceUp)) {
                    out2.add(s.id);
                }
                continue;
            }
            Set<String> ports = bridgePorts.get(s.bridge);
            if (ports == null) {
                out2.add(s.id);
                continue;
            }
            boolean anyLink = false;
            boolean anyUp = false;
            for (String p : ports) {
                if (p != null && links.contains(p)) {
                    anyLink = true;
                    anyUp |= ifaceUp.getOrDefault(p, false);
                }
            }
            if (anyLink && !anyUp) {
                out2.add(s.id);
            }
        }
        return out2;
    }

    /**
     * A P4 switch is down when the OVS bridges' ports towards it ({@code ports} of fabric.json) are
     * all down (its neighbours lost carrier: what LLDP would say); unknown without such ports.
     */
    private boolean p4Down(Fabric.SwitchInfo p4, Map<String, Set<String>> bridgePorts, Map<String, Integer> ofport,
                           Map<String, Boolean> ifaceUp) {
        boolean any = false;
        for (Fabric.SwitchInfo n : fabric.switches.values()) {
            Integer port = n.ports.get(p4.id);
            if (n.p4 != null || port == null) {
                continue;
            }
            for (String iface : bridgePorts.getOrDefault(n.bridge, Set.of())) {
                if (iface != null && port.equals(ofport.get(iface))) {
                    any = true;
                    if (ifaceUp.getOrDefault(iface, false)) {
                        return false;
                    }
                }
            }
        }
        return any;
    }
}
