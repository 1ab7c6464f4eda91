package org.hybridlb.solver.ilp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.assign.Instance;

/**
 * The LP / Lagrangian bound must be at least the true optimum (found by enumeration) whatever
 * the multipliers are, and column generation's bound too. Fabric: {@link DuetIlpTest#fabric}.
 */
class LpBoundTest {
    @Property(tries = 40)
    void lagrangianBoundsTheOptimumForAnyMultipliers(@ForAll @IntRange(min = 1, max = 5) int nVips,
                                                     @ForAll long seed) {
        Random r = new Random(seed);
        Instance in = DuetIlpTest.randomTinyInstance(r, nVips);
        double optimum = DuetIlpTest.bruteForceBest(in);
        int nl = in.resources().linkCount();
        int ns = in.switchCount();
        double[] pi = new double[nl];
        double[] mu = new double[ns];
        double[] nu = new double[ns];
        for (int l = 0; l < nl; l++) {
            pi[l] = r.nextInt(2) == 0 ? 0 : r.nextDouble() * 0.5;
        }
        for (int s = 0; s < ns; s++) {
            mu[s] = r.nextInt(2) == 0 ? 0 : r.nextDouble() * 0.1;
            nu[s] = r.nextInt(2) == 0 ? 0 : r.nextDouble() * 0.1;
        }
        double eta = r.nextInt(2) == 0 ? 0 : r.nextDouble() * 0.01;
        double ub = new LpBound(in, null, 0).lagrangian(pi, mu, nu, eta, 0);
        assertTrue(ub >= optimum - 1e-12, "Lagrangian " + ub + " below the optimum " + optimum);
    }

    @Property(tries = 30)
    void columnGenerationBoundsTheOptimum(@ForAll @IntRange(min = 1, max = 5) int nVips, @ForAll long seed) {
        Instance in = DuetIlpTest.randomTinyInstance(new Random(seed), nVips);
        double optimum = DuetIlpTest.bruteForceBest(in);
        LpBound.Result res = new LpBound(in, null, 0).solve(List.of(), new BitSet(),
                System.nanoTime() / 1e9 + 10);
        assertTrue(res.rounds > 0);
        assertTrue(res.bound >= optimum - 1e-12, "bound " + res.bound + " below the optimum " + optimum);
        if (res.converged) {
            // at convergence the Lagrangian equals the LP relaxation (strong duality)
            assertTrue(res.bound <= res.lpValue + 1e-6, "bound " + res.bound + " vs LP " + res.lpValue);
        }
    }
}
