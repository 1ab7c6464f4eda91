package org.hybridlb.solver.ilp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.hybridlb.solver.assign.Algorithms;
import org.junit.jupiter.api.Test;

/** With the tools on the class path, ServiceLoader finds {@code ilp} and the registry offers it. */
class IlpAlgorithmProviderTest {
    @Test
    void theRegistryFindsTheIlpThroughTheServiceLoader() {
        assertTrue(Algorithms.names().contains("ilp"), Algorithms.names().toString());
        assertEquals("greedy", Algorithms.names().get(0), "the library's own come first");
        assertNull(Algorithms.unavailable("ilp"));
        assertTrue(Algorithms.get("ilp") instanceof IlpAlgorithm);
        assertEquals("ilp", Algorithms.get("ilp").name());
    }
}
