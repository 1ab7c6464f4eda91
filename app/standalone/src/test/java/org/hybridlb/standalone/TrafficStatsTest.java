package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.stats.CounterSample;
import org.hybridlb.app.core.stats.TrafficFixture;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.standalone.ovs.OvsCounters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hybridlbd's traffic adapter on the shared fixture: the readings rendered as OVS {@code dump-flows}
 * text (the controller's cookie layout), SMux {@code /stats} counters and host-agent rates give the
 * pinned matrix and placement, exactly as the ONOS app's adapter does on the same readings
 * (app/onos OnosStatsSourceTest).
 */
class TrafficStatsTest {
    @TempDir
    Path dir;

    TrafficFixture.Reading now;

    Fabric fabric() throws Exception {
        Topology t = TrafficFixture.topology();
        ModelIo.write(dir.resolve("topology.json"), t);
        Map<String, Object> switches = new LinkedHashMap<>();
        int loc = 1;
        for (Switch s : t.switches) {
            switches.put(s.id, Map.of("bridge", "b" + loc, "location", loc++));
        }
        Map<String, Object> hosts = new LinkedHashMap<>();
        for (Host h : t.hosts) {
            hosts.put(h.id, Map.of("ip", h.ip, "location", loc++));
        }
        List<Map<String, Object>> smuxes = new java.util.ArrayList<>();
        for (Smux m : t.smuxes) {
            hosts.put(m.id, Map.of("ip", m.ip, "location", loc++));
            smuxes.add(Map.of("id", m.id, "ip", m.ip, "controlUrl", "http://127.0.0.1:9/"));
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("topology", "topology.json");
        doc.put("ovs", Map.of("rundir", "/nonexistent"));
        doc.put("switches", switches);
        doc.put("hosts", hosts);
        doc.put("smuxes", smuxes);
        Files.writeString(dir.resolve("fabric.json"), Json.write(doc));
        return Fabric.load(dir.resolve("fabric.json"));
    }

    /** What {@code ovs-ofctl dump-flows} answers for the controller's flows of {@code sw} now. */
    String dumpFlows(Fabric f, Fabric.SwitchInfo sw) {
        if (!now.read.contains(sw.id)) {
            throw new IllegalStateException("ovs-ofctl: " + sw.bridge + ": connection refused");
        }
        StringBuilder out = new StringBuilder("OFPST_FLOW reply (OF1.5) (xid=0x2):\n");
        for (TrafficFixture.Counter c : now.counters) {
            if (c.at.equals(sw.id) && c.kind != CounterSample.Kind.SMUX) {
                boolean entry = c.kind == CounterSample.Kind.HMUX_ENTRY;
                out.append(String.format(" cookie=0x%x, duration=9.1s, table=0, n_packets=%d, n_bytes=%d, priority=%d,"
                                + "ip,nw_dst=%s actions=%s%n",
                        f.cookie | (entry ? OvsCounters.KIND_ENTRY : OvsCounters.KIND_ROUTE), c.bytes / 100, c.bytes,
                        entry ? 3000 : 2000, c.vip, entry ? "group:65537" : "load:0x5->NXM_NX_REG0[],resubmit(,2)"));
            }
        }
        return out.toString();
    }

    /** The SMuxes' {@code GET /stats} counters per VIP now. */
    final SmuxControl smuxes = TrafficFixture.smuxes(() -> now);

    @Test
    void theSharedReadingsGiveThePinnedMatrixAndPlacement() throws Exception {
        Fabric f = fabric();
        TrafficStats stats = new TrafficStats(f, sw -> dumpFlows(f, sw), smuxes, () -> now.dipRates, Set::of,
                TrafficFixture.PERIOD);
        TrafficInterval t = null;
        List<TrafficFixture.Reading> readings = TrafficFixture.readings();
        for (int i = 0; i < readings.size(); i++) {
            now = readings.get(i);
            t = stats.sample(now.atMillis);
            if (i < readings.size() - 1) {
                assertNull(t, "no interval before the window is covered");
            }
        }
        assertNotNull(t);
        assertEquals(TrafficFixture.resource(TrafficFixture.MATRIX), TrafficFixture.json(t));
        assertEquals(TrafficFixture.resource(TrafficFixture.PLACEMENT), TrafficFixture.json(TrafficFixture.placement(t)));
        stats.close();
    }
}
