package org.hybridlb.app.core.hmux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.hybridlb.app.core.model.Bucket;
import org.junit.jupiter.api.Test;

/** Hash contracts, and what a switch that keeps less than the intent is given to hold. */
class HashContractTest {
    static final List<Bucket> EVEN = List.of(new Bucket("10.0.1.1", 1, null, 0), new Bucket("10.0.1.2", 63, null, 1));
    static final List<Bucket> SKEWED = List.of(new Bucket("10.0.1.1", 1, null, 0), new Bucket("10.0.1.2", 64, null, 1));

    @Test
    void dpHashAgreesOnlyWithinSixtyFourSlots() {
        HashContract dp = HashContract.of(HashContract.Selection.OVS_DP_HASH, 0, HashContract.Encap.GRE);
        assertNull(dp.refuses(List.of(EVEN)), "ceil(64 / 1) = 64 slots");
        assertTrue(dp.refuses(List.of(EVEN, SKEWED)).contains("65 dp_hash slots"), "one pool past 64 is enough");
        assertNull(dp.refuses(List.of(List.of(new Bucket("10.0.1.1", 0, null, 0)))), "no live bucket");
        HashContract ovs = HashContract.of(HashContract.Selection.OVS_HASH, 0, HashContract.Encap.GRE);
        assertNull(ovs.refuses(List.of(SKEWED)), "selection_method=hash takes any pool");
        HashContract none = HashContract.none("an unknown hash");
        assertFalse(none.agrees());
        assertEquals("an unknown hash", none.refuses(List.of(EVEN)));
    }

    @Test
    void aSwitchIsGivenTheIntentAsItCanHoldIt() {
        SwitchIntent want = SwitchIntent.builder().entry(new ServiceMatch("10.100.0.1", "tcp", 80),
                List.of(new DipBucket(3, "10.9.0.1", "10.0.0.1", 1), new DipBucket(7, "10.0.0.2", "10.0.0.2", 4)))
                .route("10.100.0.2", "tor-1").build();
        SwitchCapability of15 = new SwitchCapability(HashContract.of(HashContract.Selection.OVS_HASH, 0,
                HashContract.Encap.GRE), true, true, true, Set.of());
        assertEquals(want.toBuilder().fallback(true).build(), of15.holdable(want));
        SwitchCapability of13 = new SwitchCapability(HashContract.of(HashContract.Selection.OVS_DP_HASH, 0,
                HashContract.Encap.GRE), false, false, false, Set.of());
        assertEquals(List.of(new DipBucket(0, null, "10.0.0.1", 1), new DipBucket(1, null, "10.0.0.2", 4)),
                of13.holdable(want).entries.values().iterator().next(), "buckets by position, without DIPs");
        assertEquals(want.routes, of13.holdable(want).routes);
    }
}
