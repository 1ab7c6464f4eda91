package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.metrics.Scraped;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The controller's metrics follow what it does (events) and what it holds (state read at scrape time). */
class ControllerMetricsTest {
    static final String VIP = "10.100.0.1";
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
    final ControllerMetrics metrics = new ControllerMetrics();
    Controller c;

    @BeforeEach
    void start() {
        c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO), fabric.ports(store), metrics);
        c.start();
        c.awaitIdle(20_000);
    }

    @AfterEach
    void stop() {
        c.close();
    }

    String vipJson(String vip, int... hosts) {
        return FakeFabric.vipJson(topo, vip, hosts);
    }

    /** 200 MB/s towards {@code vips} from the first ToR: enough for the assignment to put them on HMuxes. */
    void traffic(String... vips) {
        String tor = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().get().id;
        List<VipTraffic> vt = new ArrayList<>();
        for (String v : vips) {
            vt.add(new VipTraffic(v, Map.of(tor, 2e8), null));
        }
        fabric.traffic = new TrafficInterval(0, 0, 10, vt);
    }

    /** A VIP placed on an HMux through a migration; returns its switch. */
    String vipOnHmux() {
        traffic(VIP);
        c.createVip(vipJson(VIP, 0, 1));
        c.awaitIdle(20_000);
        String at = c.assignment().installed.get(VIP);
        assertNotEquals(Assignment.SMUX, at, "the VIP should be on an HMux: " + c.assignment());
        return at;
    }

    @Test
    void reconcilesMigrationsPlacementAndSouthboundCallsAreReported() {
        String at = vipOnHmux();
        Scraped s = Scraped.of(metrics);
        assertEquals(1, s.value("hybridlb_controller_active"));
        assertTrue(s.value("hybridlb_reconciles", "cause", "start") >= 1, "start round counted");
        assertTrue(s.value("hybridlb_reconciles", "cause", "config_changed") >= 1, "config round counted");
        assertTrue(s.value("hybridlb_reconcile_duration_seconds") >= 2, "each round timed");
        assertTrue(s.value("hybridlb_last_reconcile_timestamp_seconds") > 0);
        assertEquals(1, s.value("hybridlb_vips", "mux", "hmux", "placement", at), "the VIP counted on its HMux");
        assertTrue(Double.isNaN(s.value("hybridlb_vips", "mux", "smux")), "none on the SMuxes only");
        assertEquals(1, s.value("hybridlb_vips_configured"));
        long done = c.migrations().recent.stream().filter(m -> MigrationRecord.DONE.equals(m.state)).count();
        assertTrue(done >= 1);
        assertEquals(done, s.value("hybridlb_migrations", "outcome", "done"), "every finished migration counted");
        assertEquals(done, s.value("hybridlb_migration_duration_seconds", "outcome", "done"), "and timed");
        assertEquals(c.stats().controller.wavesApplied, s.value("hybridlb_waves_applied"));
        assertEquals(0, s.value("hybridlb_migration_in_flight"));
        assertEquals(c.smuxes().get(0).tableVersion, s.value("hybridlb_smux_table_version"));
        assertEquals(topo.smuxes.size(), s.value("hybridlb_smuxes_live"));
        assertEquals(topo.switches.size(), s.value("hybridlb_switches"));
        assertEquals(0, s.value("hybridlb_switches_down"));
        assertTrue(s.value("hybridlb_southbound_duration_seconds", "southbound", "hmux", "operation", "apply") >= 1);
        assertTrue(s.value("hybridlb_southbound_duration_seconds", "southbound", "hmux", "operation", "read") >= 1,
                "the start round read the switches back");
        assertTrue(s.value("hybridlb_southbound_duration_seconds", "southbound", "smux", "operation", "put_table") >= 1);
        assertTrue(Double.isNaN(s.value("hybridlb_southbound_errors")), "no error yet");
        assertEquals(1, s.value("hybridlb_state_writable"));

        // the HMux fails: one switch failover, its VIP withdrawn, then re-placed
        fabric.down.add(at);
        c.switchDown(at);
        c.awaitIdle(20_000);
        s = Scraped.of(metrics);
        assertEquals(1, s.value("hybridlb_failovers", "kind", "switch"));
        assertEquals(1, s.value("hybridlb_failover_vips"));
        assertEquals(1, s.value("hybridlb_switches_down"));
        assertTrue(s.value("hybridlb_reconciles", "cause", "switch_down") >= 1);
        assertTrue(Double.isNaN(s.value("hybridlb_vips", "placement", at)), "nothing left on the failed switch");

        // an SMux lost: an SMux failover
        String lost = topo.smuxes.get(0).id;
        fabric.live.remove(lost);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        s = Scraped.of(metrics);
        assertEquals(1, s.value("hybridlb_failovers", "kind", "smux"));
        assertEquals(topo.smuxes.size() - 1, s.value("hybridlb_smuxes_live"));
    }

    @Test
    void aSouthboundCallThatFailsIsCountedAndTheTrafficSplitFollowsThePlacement() {
        fabric.failPuts = 1;
        traffic(VIP);
        c.createVip(vipJson(VIP, 0, 1));
        c.awaitIdle(20_000);
        assertEquals(1, Scraped.of(metrics).value("hybridlb_rollbacks"), "the wave whose put failed rolled back");
        c.reassignNow();
        c.awaitIdle(20_000);
        Scraped s = Scraped.of(metrics);
        assertEquals(1, s.value("hybridlb_southbound_errors", "southbound", "smux", "operation", "put_table"));
        assertTrue(s.value("hybridlb_southbound_duration_seconds", "southbound", "smux", "operation", "put_table") >= 2,
                "the failed call is timed too, and the next one went through");
        String at = c.assignment().installed.get(VIP);
        double bps = 2e8;
        assertEquals(Assignment.SMUX.equals(at) ? 0 : bps, s.value("hybridlb_traffic_bytes_per_second", "mux", "hmux"));
        assertEquals(Assignment.SMUX.equals(at) ? bps : 0, s.value("hybridlb_traffic_bytes_per_second", "mux", "smux"));
    }

    @Test
    void aStoppedControllerReportsNoStateButKeepsItsCounters() {
        vipOnHmux();
        double rounds = Scraped.of(metrics).value("hybridlb_reconciles", "cause", "start");
        c.close();
        Scraped s = Scraped.of(metrics);
        assertTrue(Double.isNaN(s.value("hybridlb_controller_active")), "no controller here now");
        assertTrue(Double.isNaN(s.value("hybridlb_vips_configured")));
        assertEquals(rounds, s.value("hybridlb_reconciles", "cause", "start"), "counters of this process stay");
        assertTrue(metrics.scrape().contains("hybridlb_reconciles_total{cause=\"start\"}"), metrics.scrape());
    }
}
