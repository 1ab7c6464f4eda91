package org.hybridlb.solver.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.SmuxProvisioning;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.junit.jupiter.api.Test;

class ProvisioningTest {
    /** 2 pods of 2 ToRs + 2 aggs, 2 cores (agg j - core j); host 10.P.T.1 on tP_T; an SMux on t1_1. */
    private static Topology topo() {
        List<Switch> sw = new ArrayList<>();
        List<Link> links = new ArrayList<>();
        List<Host> hosts = new ArrayList<>();
        sw.add(new Switch("c0", SwitchRole.CORE, null, null));
        sw.add(new Switch("c1", SwitchRole.CORE, null, null));
        for (int p = 0; p < 2; p++) {
            for (int a = 0; a < 2; a++) {
                sw.add(new Switch("a" + p + a, SwitchRole.AGG, p, null));
                links.add(new Link("a" + p + a, "c" + a, 4e10));
            }
            for (int t = 0; t < 2; t++) {
                sw.add(new Switch("t" + p + t, SwitchRole.TOR, p, null));
                for (int a = 0; a < 2; a++) {
                    links.add(new Link("t" + p + t, "a" + p + a, 1e10));
                }
                hosts.add(new Host("h" + p + t, "10." + p + "." + t + ".1", "t" + p + t));
            }
        }
        return new Topology("t", sw, links, hosts, List.of(new Smux("m", "10.9.9.9", "t11", 3.6e9)));
    }

    private static Vip vip(String ip, String dip) {
        return new Vip(ip, "100.0.0.0/24", List.of(new VipPort("any", 0, List.of(new Dip(dip, 1, null)))));
    }

    private static VipTraffic from(String vip, String node, double bytesPerSec) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put(node, bytesPerSec);
        return new VipTraffic(vip, m, null);
    }

    /** Four VIPs of 1, 2, 3, 4 Gbps (from t00 to a DIP on t01) on t00, a00, a10, c0. */
    private static Object[] setup() {
        List<Vip> vips = new ArrayList<>();
        List<VipTraffic> tr = new ArrayList<>();
        String[] at = {"t00", "a00", "a10", "c0"};
        for (int i = 1; i <= 4; i++) {
            vips.add(vip("100.0.0." + i, "10.0.1.1"));
            tr.add(from("100.0.0." + i, "t00", i * 1e9 / 8));
        }
        Instance in = Instance.build(topo(), new VipSet(vips), new TrafficInterval(0, 0, 600, tr), SolverOptions.defaults());
        int[] placement = new int[4];
        for (int i = 0; i < 4; i++) {
            placement[i] = in.switchIndex(at[i]);
        }
        return new Object[] {in, placement};
    }

    @Test
    void smuxCountIsTheWorstOfUnassignedFailureAndTransient() {
        Object[] s = setup();
        Instance in = (Instance) s[0];
        int[] placement = (int[]) s[1];
        // pod 0 holds 1 + 2 = 3 Gbps; the 3 busiest switches c0, a10, a00 hold 4 + 3 + 2 = 9 Gbps
        SmuxProvisioning p = SmuxProvisioner.provision(in, placement, null, 3.6e9);
        assertEquals(0, p.unassignedBps);
        assertEquals(9e9, p.failureBps, 1e-3);
        assertEquals("3 switches", p.worstFailure);
        assertEquals(List.of("c0", "a10", "a00"), p.failedSwitches);
        assertEquals(3, p.smuxCount, "9 Gbps / 3.6 Gbps, rounded up");
        // VIP 4 on the SMuxes: 4 unassigned + failure of t00, a00, a10 (1 + 2 + 3)
        placement[3] = -1;
        p = SmuxProvisioner.provision(in, placement, null, 1e10);
        assertEquals(4e9, p.unassignedBps, 1e-3);
        assertEquals(10e9, p.failureBps, 1e-3);
        assertEquals(1, p.smuxCount);
        // migrating VIPs 2 and 3 from elsewhere adds them to the transient load: 4 + 5 = 9 Gbps
        Map<String, String> prev = new LinkedHashMap<>();
        prev.put("100.0.0.1", "t00");
        prev.put("100.0.0.2", "t10");
        prev.put("100.0.0.3", "smux");
        p = SmuxProvisioner.provision(in, placement, new Assignment("x", prev, 0, 0, 0, null), 1e9);
        assertEquals(9e9, p.transientBps, 1e-3);
        assertEquals(10, p.smuxCount, "failure (10 Gbps) still dominates");
    }

    @Test
    void failedHmuxTrafficReroutesThroughTheSmux() {
        Object[] s = setup();
        Instance in = (Instance) s[0];
        int[] only = {in.switchIndex("a00"), -1, -1, -1}; // just the 1 Gbps VIP, on a00
        FailureImpact.Scenario base = FailureImpact.baseline(in, only);
        // t00 -> a00 (1 Gbps, direct), a00 -> t01: 1 of 10 Gbps
        assertEquals(0.1, base.maxLinkUtilisation, 1e-12);
        FailureImpact.Scenario down = FailureImpact.evaluate(in, only, "a00", List.of("a00"));
        // to the SMux on t11 (pod 1): t00 -> a01 -> c1 -> a11 -> t11, then back to t01 the same way
        assertEquals(0.1, down.maxLinkUtilisation, 1e-12);
        assertTrue(down.maxLink.startsWith("t00->a01") || down.maxLink.contains("a01") || down.maxLink.contains("a11")
                || down.maxLink.contains("c1"), down.maxLink);
        // all four VIPs, pod 0 failed: sources and DIPs are in pod 0, so all traffic disappears
        FailureImpact.Scenario pod = FailureImpact.evaluate(in, (int[]) s[1], "pod 0",
                List.of("t00", "t01", "a00", "a01"));
        assertEquals(0, pod.maxLinkUtilisation, 1e-12);
        List<FailureImpact.Scenario> all = FailureImpact.scenarios(in, (int[]) s[1], 2, 1);
        assertEquals(2 + 2 * 2, all.size());
        for (int i = 1; i < all.size(); i++) {
            assertTrue(all.get(i - 1).maxLinkUtilisation >= all.get(i).maxLinkUtilisation);
        }
    }
}
