package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.stats.CounterSample;
import org.hybridlb.app.core.stats.TrafficFixture;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.onos.fabric.OnosStatsSource;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.junit.Test;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IpPrefix;
import org.onosproject.TestApplicationId;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleServiceAdapter;

/**
 * The app's traffic adapter on the shared fixture: the readings rendered as ONOS flow entries of the
 * app (HMux entries and {@code VIP/32} routes by priority, on available devices), SMux
 * {@code /stats} counters and host-agent rates give the pinned matrix and placement, exactly as
 * hybridlbd's adapter does on the same readings (app/standalone TrafficStatsTest).
 */
public class OnosStatsSourceTest {
    static final ApplicationId APP = TestApplicationId.create(HybridlbManager.APP_NAME);

    TrafficFixture.Reading now;
    final Map<String, DeviceId> devices = new HashMap<>();

    FabricView view() {
        Topology t = TrafficFixture.topology();
        List<FabricView.SwitchSpec> specs = new ArrayList<>();
        int loc = 1;
        for (Switch s : t.switches) {
            DeviceId d = DeviceId.deviceId(String.format("of:%016x", loc++));
            devices.put(s.id, d);
            specs.add(new FabricView.SwitchSpec(d, s, null));
        }
        return new FabricView(specs, t.links, t.hosts, t.smuxes);
    }

    /** The app's flow entries with their counters now (stale ones of unavailable devices included). */
    final FlowRuleServiceAdapter flows = new FlowRuleServiceAdapter() {
        @Override
        public Iterable<FlowEntry> getFlowEntriesById(ApplicationId id) {
            List<FlowEntry> out = new ArrayList<>();
            for (TrafficFixture.Counter c : now.counters) {
                if (c.kind == CounterSample.Kind.SMUX) {
                    continue;
                }
                FlowRule r = DefaultFlowRule.builder().forDevice(devices.get(c.at))
                        .withSelector(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                                .matchIPDst(IpPrefix.valueOf(c.vip + "/32")).build())
                        .withTreatment(DefaultTrafficTreatment.emptyTreatment())
                        .withPriority(c.kind == CounterSample.Kind.HMUX_ENTRY ? HmuxLayout.PRIORITY_ENTRY_PORT
                                : HmuxLayout.PRIORITY_ROUTE)
                        .fromApp(APP).makePermanent().build();
                out.add(new DefaultFlowEntry(r, FlowEntry.FlowEntryState.ADDED, 9, c.bytes / 100, c.bytes));
            }
            return out;
        }
    };

    /** The SMuxes' {@code GET /stats} counters per VIP now. */
    final SmuxControl smuxes = TrafficFixture.smuxes(() -> now);

    @Test
    public void theSharedReadingsGiveThePinnedMatrixAndPlacement() {
        FabricView view = view();
        OnosStatsSource stats = new OnosStatsSource(APP, flows,
                d -> devices.entrySet().stream().anyMatch(e -> e.getValue().equals(d) && now.read.contains(e.getKey())),
                () -> view, smuxes, () -> now.dipRates, TrafficFixture.PERIOD);
        TrafficInterval t = null;
        List<TrafficFixture.Reading> readings = TrafficFixture.readings();
        for (int i = 0; i < readings.size(); i++) {
            now = readings.get(i);
            t = stats.sample(now.atMillis);
            if (i < readings.size() - 1) {
                assertNull("no interval before the window is covered", t);
            }
        }
        assertNotNull(t);
        assertEquals(TrafficFixture.resource(TrafficFixture.MATRIX), TrafficFixture.json(t));
        assertEquals(TrafficFixture.resource(TrafficFixture.PLACEMENT), TrafficFixture.json(TrafficFixture.placement(t)));
    }
}
