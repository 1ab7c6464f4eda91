package org.hybridlb.app.onos.fabric;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.hybridlb.app.core.hmux.DipBucket;
import org.junit.Test;
import org.onosproject.core.GroupId;
import org.onosproject.net.group.GroupBucket;

/** The P4 HMux layout's pieces the southbound test does not reach: member ids under ONOS, malformed groups. */
public class P4HmuxRulesTest {
    /**
     * ONOS 2.7's PI group translator numbers member {@code i} of group {@code g}
     * {@code Objects.hash(g, (short) i)}: with the layout's group ids, every member of every service
     * has its own id within dip_selector, positive, ascending in bucket order.
     */
    @Test
    public void membersOfEveryServiceGetDistinctAscendingIdsUnderOnos() {
        long previousLast = 0;
        for (int sid = 1; sid <= P4HmuxRules.MAX_SERVICE_ID; sid++) {
            GroupId g = GroupId.valueOf(P4HmuxRules.groupId(sid));
            long first = Objects.hash(g, (short) 0);
            long last = Objects.hash(g, (short) (P4HmuxRules.MAX_MEMBERS - 1));
            assertTrue("service " + sid, first > previousLast && last > first);
            previousLast = last;
        }
    }

    @Test
    public void membersReadBackAsTheBucketsWithTheirWeights() {
        List<DipBucket> pool = List.of(new DipBucket(2, "10.0.0.5", "10.0.0.5", 3), new DipBucket(7, null, "10.0.0.6", 1));
        assertEquals(4, P4HmuxRules.members(pool).size());
        assertEquals(List.of(new DipBucket(2, null, "10.0.0.5", 3), new DipBucket(7, null, "10.0.0.6", 1)),
                P4HmuxRules.bucketsOf(P4HmuxRules.members(pool)));
        // bucket ids out of order, or a bucket split in two runs, are not the layout's
        List<GroupBucket> swapped = new ArrayList<>(P4HmuxRules.members(pool));
        swapped.add(0, swapped.remove(3));
        assertNull(P4HmuxRules.bucketsOf(swapped));
        List<GroupBucket> split = new ArrayList<>(P4HmuxRules.members(pool));
        split.add(split.remove(0));
        assertNull(P4HmuxRules.bucketsOf(split));
    }
}
