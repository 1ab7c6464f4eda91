package org.hybridlb.solver.provision;

import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SmuxProvisioning;
import org.hybridlb.solver.routing.Fabric;

/**
 * SMux provisioning (Duet §3.8.2): SMuxes = max(unassigned traffic, worst failure scenario,
 * migration transient) / SMux capacity, rounded up.
 *
 * <ul>
 * <li>Unassigned: traffic of the VIPs on the SMuxes.</li>
 * <li>Failure: unassigned plus the traffic of the VIPs on the failed switches, which fails over
 *   to the SMuxes (§3.5.1). Scenarios: any one pod (its ToRs and aggs), or any three switches.
 *   Failover traffic adds up per switch, so the worst three switches are exactly the three with
 *   the most HMux traffic: no search over the C(n, 3) triples is needed. (Traffic that a
 *   failure makes disappear, e.g. from sources inside a failed pod, is not subtracted: the
 *   estimate errs on the safe side.)</li>
 * <li>Transient: unassigned plus every VIP that lands on an HMux other than where it was
 *   ({@code previous}); it passes through the SMuxes while it moves (§3.4.2). 0 extra without
 *   a previous assignment.</li>
 * </ul>
 */
public final class SmuxProvisioner {
    private SmuxProvisioner() {
    }

    /**
     * @param placement switch index per VIP of {@code in}, or a negative value for the SMuxes
     * @param previous  installed assignment, or null
     */
    public static SmuxProvisioning provision(Instance in, int[] placement, Assignment previous,
                                             double capacityBps) {
        Fabric f = in.fabric();
        double[] perSwitch = new double[f.switchCount()];
        double[] perPod = new double[f.podCount()];
        double unassigned = 0;
        double moving = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            double t = in.trafficBps(v);
            int s = placement[v];
            if (s < 0) {
                unassigned += t;
                continue;
            }
            perSwitch[s] += t;
            if (f.pod(s) >= 0) {
                perPod[f.pod(s)] += t;
            }
            if (previous != null && !f.id(s).equals(previous.placementOf(in.vipId(v)))) {
                moving += t;
            }
        }
        int[] top = new int[] {-1, -1, -1};
        for (int s = 0; s < perSwitch.length; s++) {
            for (int k = 0; k < 3; k++) {
                if (top[k] < 0 || perSwitch[s] > perSwitch[top[k]]) {
                    for (int j = 2; j > k; j--) {
                        top[j] = top[j - 1];
                    }
                    top[k] = s;
                    break;
                }
            }
        }
        double three = 0;
        List<String> threeIds = new ArrayList<>();
        for (int s : top) {
            if (s >= 0) {
                three += perSwitch[s];
                threeIds.add(f.id(s));
            }
        }
        int worstPod = -1;
        for (int q = 0; q < perPod.length; q++) {
            if (worstPod < 0 || perPod[q] > perPod[worstPod]) {
                worstPod = q;
            }
        }
        double pod = worstPod < 0 ? 0 : perPod[worstPod];
        String worst;
        List<String> failed;
        double failover;
        if (worstPod >= 0 && pod >= three) {
            worst = "pod " + f.podLabel(worstPod);
            failed = new ArrayList<>();
            for (int s : f.podTors(worstPod)) {
                failed.add(f.id(s));
            }
            for (int s : f.podAggs(worstPod)) {
                failed.add(f.id(s));
            }
            failover = pod;
        } else {
            worst = "3 switches";
            failed = threeIds;
            failover = three;
        }
        double failure = unassigned + failover;
        double transientBps = unassigned + moving;
        double need = Math.max(unassigned, Math.max(failure, transientBps));
        int count = need <= 0 ? 0 : (int) Math.ceil(need / capacityBps - 1e-9);
        return new SmuxProvisioning(capacityBps, unassigned, failure, worst, failed, transientBps, count);
    }
}
