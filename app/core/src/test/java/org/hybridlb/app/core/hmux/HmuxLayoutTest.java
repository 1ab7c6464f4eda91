package org.hybridlb.app.core.hmux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.hybridlb.app.core.model.Bucket;
import org.junit.jupiter.api.Test;

/** The one layout policy: the ladder, the keys a reader recognises rules by, the buckets an HMux holds. */
class HmuxLayoutTest {
    static final ServiceMatch WHOLE = new ServiceMatch("10.100.0.1", "any", 0);
    static final ServiceMatch PROTO = new ServiceMatch("10.100.0.1", "tcp", 0);
    static final ServiceMatch PORT = new ServiceMatch("10.100.0.1", "tcp", 80);

    @Test
    void moreSpecificWins() {
        assertTrue(HmuxLayout.priority(WHOLE) < HmuxLayout.priority(PROTO), "protocol above the whole VIP");
        assertTrue(HmuxLayout.priority(PROTO) < HmuxLayout.priority(PORT), "protocol and port above the protocol");
        assertTrue(HmuxLayout.PRIORITY_ROUTE < HmuxLayout.priority(WHOLE), "a switch's own entry above a route");
        assertTrue(HmuxLayout.PRIORITY_AGGREGATE < HmuxLayout.PRIORITY_ROUTE, "a VIP/32 above its aggregate");
        assertEquals(List.of(3000, 3050, 3100, 2000, 1000), List.of(HmuxLayout.priority(WHOLE), HmuxLayout.priority(PROTO),
                HmuxLayout.priority(PORT), HmuxLayout.PRIORITY_ROUTE, HmuxLayout.PRIORITY_AGGREGATE));
    }

    @Test
    void aReaderKnowsARuleByItsPriority() {
        for (ServiceMatch m : List.of(WHOLE, PROTO, PORT)) {
            assertEquals(HmuxLayout.Kind.ENTRY, HmuxLayout.kindAt(HmuxLayout.priority(m)));
        }
        assertEquals(HmuxLayout.Kind.ROUTE, HmuxLayout.kindAt(HmuxLayout.PRIORITY_ROUTE));
        assertEquals(HmuxLayout.Kind.AGGREGATE, HmuxLayout.kindAt(HmuxLayout.PRIORITY_AGGREGATE));
        assertNull(HmuxLayout.kindAt(3001), "off the ladder: none of ours");
    }

    @Test
    void aCookieCarriesItsKindAndARoutesTarget() {
        long c = HmuxLayout.cookie(0x4c420000L, HmuxLayout.Kind.ROUTE, 0xfffffffeL);
        assertEquals(0xfffffffe4c420002L, c);
        assertEquals(HmuxLayout.Kind.ROUTE, HmuxLayout.kindOf(c));
        assertEquals(0xfffffffeL, HmuxLayout.dataOf(c));
        assertEquals(HmuxLayout.Kind.ENTRY, HmuxLayout.kindOf(HmuxLayout.cookie(0x4c420000L, HmuxLayout.Kind.ENTRY, 0)));
        assertNull(HmuxLayout.kindOf(0x4c420007L));
        assertThrows(IllegalArgumentException.class, () -> HmuxLayout.cookie(0x4c420001L, HmuxLayout.Kind.ENTRY, 0),
                "a base must leave the kind bits free");
    }

    @Test
    void groupKeysNameTheirItem() {
        for (ServiceMatch m : List.of(WHOLE, PROTO, PORT, new ServiceMatch("10.1.2.3", "udp", 53))) {
            assertEquals(m, HmuxLayout.entryOfGroupKey(HmuxLayout.entryGroupKey(m)));
        }
        assertEquals("hlb:vip:10.100.0.1:tcp/80", HmuxLayout.entryGroupKey(PORT));
        assertEquals("10.100.0.0/16", HmuxLayout.aggregateOfGroupKey(HmuxLayout.aggregateGroupKey("10.100.0.0/16")));
        assertNull(HmuxLayout.entryOfGroupKey("hlb:vip:10.100.0.1:sctp/80"));
        assertNull(HmuxLayout.entryOfGroupKey("hlb:agg:10.100.0.0/16"));
        assertNull(HmuxLayout.aggregateOfGroupKey("hlb:to:tor1"));
    }

    @Test
    void anHmuxHoldsABucketPerDipThatTakesNewFlows() {
        List<DipBucket> b = HmuxLayout.hmuxBuckets(List.of(new Bucket("10.0.0.3", 2, null, 4),
                new Bucket("10.0.0.1", 0, null, 0), new Bucket("10.9.0.2", 1, "10.0.0.2", 1)));
        assertEquals(List.of(new DipBucket(1, "10.9.0.2", "10.0.0.2", 1), new DipBucket(4, "10.0.0.3", "10.0.0.3", 2)), b,
                "by bucket id; the drained DIP (weight 0) has none; encapsulated towards the DIP's host");
    }
}
