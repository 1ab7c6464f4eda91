package org.hybridlb.solver.ilp;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Assignments;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.NoAssignmentException;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * The ILP's starting point, and the repair that makes any usage feasible: the warm start is the
 * best of the greedy variants (and, with an installed assignment, sticky, one-time and the
 * installed one kept); {@link #repair} also turns an answer of a model that lacked link rows
 * into a feasible incumbent.
 */
final class WarmStart {
    private WarmStart() {
    }

    /**
     * The best feasible assignment among the greedy variants (and, with --current, the installed
     * one, as is and kept as far as the traffic allows) within the migration budget: the warm start.
     * With a budget that none of them meets, the answer would break it: {@link NoAssignmentException}.
     */
    static Usage best(IlpContext ctx) {
        List<String> names = new ArrayList<>(List.of("greedy-skip", "greedy"));
        if (ctx.current != null) {
            names.add("sticky");
            names.add("one-time");
        }
        List<Usage> candidates = new ArrayList<>();
        for (String name : names) {
            candidates.add(Assignments.usageOf(ctx.in, Algorithms.get(name).assign(ctx.in, ctx.current)));
        }
        if (ctx.current != null) {
            candidates.add(installedKept(ctx));
        }
        Usage best = null;
        double leastMoved = Double.POSITIVE_INFINITY;
        for (Usage u : candidates) {
            if (!Feasibility.violations(ctx.in, Assignments.of(ctx.in, u, "ilp", ctx.current)).isEmpty()) {
                continue;
            }
            leastMoved = Math.min(leastMoved, ctx.movedShare(u));
            if (ctx.budgetOk(u) && (best == null || ctx.share(u) > ctx.share(best))) {
                best = u;
            }
        }
        if (best == null && ctx.current != null && ctx.o.migrationBudget != null) {
            throw new NoAssignmentException(String.format(Locale.ROOT, "--migration-budget %s: no assignment found "
                    + "that moves at most %.2f%% of the traffic; the least-moving feasible one found moves %.2f%%",
                    ctx.o.migrationBudget, 100 * ctx.o.migrationBudget, 100 * leastMoved));
        }
        return best != null ? best : ctx.m.newUsage();
    }

    /**
     * The installed assignment kept wherever the new traffic allows: VIPs on a switch that is gone
     * or that no longer fits them, and then those on overloaded resources (least traffic first),
     * go to the SMuxes. What moves least.
     */
    private static Usage installedKept(IlpContext ctx) {
        Usage u = ctx.m.newUsage();
        for (int v = 0; v < ctx.in.vipCount(); v++) {
            int c = ctx.installedOn(v);
            if (c >= 0 && ctx.in.trafficBps(v) > 0 && ctx.m.fitsAlone(v, c)) {
                u.place(v, c);
            }
        }
        return repair(ctx, u);
    }

    /**
     * A feasible copy: while some resource is over capacity, move to the SMuxes the VIP on it with
     * the least traffic (least objective lost).
     */
    static Usage repair(IlpContext ctx, Usage u) {
        Usage r = u.copy();
        int[] byTraffic = ctx.in.vipsByTraffic();
        LinkLoads ll = ctx.m.newLinkLoads();
        // One pass, least traffic first, against the current usage: a VIP goes only while its
        // resource is still over. A second pass is rarely needed; the SMux-only usage is the floor.
        for (int pass = 0; pass < 3 && !Feasibility.violations(r).isEmpty(); pass++) {
            for (int i = byTraffic.length - 1; i >= 0; i--) {
                int v = byTraffic[i];
                int s = r.placement(v);
                if (s >= 0 && onOverloadedResource(ctx, r, v, s, ll)) {
                    r.remove(v);
                }
            }
        }
        return Feasibility.violations(r).isEmpty() ? r : ctx.m.newUsage();
    }

    private static boolean onOverloadedResource(IlpContext ctx, Usage u, int v, int s, LinkLoads ll) {
        if (u.ecmpUsed(s) > ctx.m.ecmpCapacity(s) || u.tunnelUsed(s) > ctx.m.tunnelCapacity(s)
                || u.hostUsed() > ctx.m.hostBudget()) {
            return true;
        }
        ctx.m.linkLoads(v, s, ll);
        for (int i = 0; i < ll.size(); i++) {
            if (u.linkUtilisation(ll.link(i)) > 1 + Usage.EPS) {
                return true;
            }
        }
        return false;
    }
}
