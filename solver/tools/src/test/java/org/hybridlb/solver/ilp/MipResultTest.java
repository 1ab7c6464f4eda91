package org.hybridlb.solver.ilp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class MipResultTest {
    @Test
    void gapIsRelativeToTheObjective() {
        assertEquals(0.025, MipResult.relativeGap(8, 8.2), 1e-12);
        assertEquals(0.0, MipResult.relativeGap(8, 8 + 1e-12), 0);
        assertTrue(Double.isNaN(MipResult.relativeGap(8, Double.NaN)));
    }

    @Test
    void gapOfAZeroObjectiveIsUndefinedNotHuge() {
        // |0.7 - 0| / max(0, 1e-9) used to be 7e8 (printed as 70000000000%)
        assertEquals(Double.POSITIVE_INFINITY, MipResult.relativeGap(0, 0.7));
        assertEquals(0.0, MipResult.relativeGap(0, 0), 0);
        MipResult r = new MipResult(MipResult.Status.FEASIBLE, new double[0], 0, 0.7, 1, "test", List.of());
        assertEquals(Double.POSITIVE_INFINITY, r.gap);
        assertEquals("undefined (objective 0)", MipResult.gapText(0, 0.7));
        assertEquals("2.5000%", MipResult.gapText(8, 8.2));
        assertEquals("-", MipResult.gapText(8, Double.NaN));
    }

    @Test
    void placeholderAndWrongSideBoundsAreNoBound() {
        assertTrue(Double.isNaN(MipResult.provenBound(42, -1e20, false))); // SCIP: none yet
        assertTrue(Double.isNaN(MipResult.provenBound(0.5, 1e100, true))); // Gurobi: GRB.INFINITY
        assertTrue(Double.isNaN(MipResult.provenBound(42, Double.NEGATIVE_INFINITY, false)));
        assertTrue(Double.isNaN(MipResult.provenBound(42, 43, false))); // above a minimum found
        assertTrue(Double.isNaN(MipResult.provenBound(0.5, 0.4, true))); // below a maximum found
        assertEquals(40.0, MipResult.provenBound(42, 40, false), 0);
        assertEquals(0.6, MipResult.provenBound(0.5, 0.6, true), 0);
        assertEquals(42.0, MipResult.provenBound(42, 42 + 1e-8, false), 0); // rounding: the objective
        assertEquals(7.0, MipResult.provenBound(Double.NaN, 7, false), 0);
    }
}
