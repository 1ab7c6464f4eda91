package org.hybridlb.app.onos.fabric;

import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SELECTOR_SIZE;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ECMP_SELECTOR_ID;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Objects;
import org.hybridlb.app.core.p4.HmuxP4Config;
import org.junit.Test;
import org.onosproject.core.GroupId;

/** The group and member ids ONOS ends up writing for the core's groups, and the ids read back. */
public class P4OnosFormTest {
    /**
     * ONOS 2.7's PI group translator numbers member {@code i} of group {@code g}
     * {@code Objects.hash(g, (short) i)}: with the spaced dip_selector group ids, every member of
     * every service (16-bit ids) has its own id within the profile, ascending in bucket order.
     */
    @Test
    public void membersOfEveryServiceGetDistinctAscendingIdsUnderOnos() {
        long previousLast = Integer.MIN_VALUE;
        for (long sid = 1; sid <= 0xffff; sid++) {
            GroupId g = GroupId.valueOf(P4OnosForm.onosGroupId(HMUX_DIP_SELECTOR_ID, sid));
            long first = Objects.hash(g, (short) 0);
            long last = Objects.hash(g, (short) (HMUX_SELECTOR_SIZE - 1));
            assertTrue("service " + sid, first > previousLast && last > first);
            previousLast = last;
        }
    }

    /** ONOS names a device's groups in one space: dip_selector groups lie above every 16-bit next id. */
    @Test
    public void dipGroupsNeverTakeAnAggregatesOrTheFabricsNextId() {
        assertTrue(P4OnosForm.onosGroupId(HMUX_DIP_SELECTOR_ID, 0) > 0xffff);
        assertEquals(HmuxP4Config.DEFAULT_AGGREGATE_NEXT_ID_BASE,
                P4OnosForm.onosGroupId(ROUTING_ECMP_SELECTOR_ID, HmuxP4Config.DEFAULT_AGGREGATE_NEXT_ID_BASE));
    }

    @Test
    public void onosGroupIdsReadBackAsTheCoresAndOthersAsNoService() {
        for (long sid : new long[] {1, 28, 4095, 0xffff}) {
            assertEquals(sid, P4OnosForm.coreGroupId(HMUX_DIP_SELECTOR_ID,
                    P4OnosForm.onosGroupId(HMUX_DIP_SELECTOR_ID, sid)));
        }
        // an id off the spacing (another writer's) is above every service id: the core finds it of no service
        assertTrue(P4OnosForm.coreGroupId(HMUX_DIP_SELECTOR_ID, 77) > 0xffff);
        assertTrue(P4OnosForm.coreGroupId(HMUX_DIP_SELECTOR_ID, 0x10000 + 5) > 0xffff);
        assertEquals(0x7001, P4OnosForm.coreGroupId(ROUTING_ECMP_SELECTOR_ID, 0x7001));
    }

    @Test
    public void readMemberIdsAreUniqueAndAscendingPerGroup() {
        assertTrue(P4OnosForm.memberId(5, 1) > P4OnosForm.memberId(5, 0));
        assertTrue(P4OnosForm.memberId(6, 0) > P4OnosForm.memberId(5, (int) HMUX_SELECTOR_SIZE));
        assertTrue(P4OnosForm.memberId(-1, 0) > 0);
    }
}
