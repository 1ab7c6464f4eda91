package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.hybridlb.app.onos.fabric.GroupConfirmation;
import org.hybridlb.app.onos.fabric.GroupConfirmation.State;
import org.junit.Test;
import org.onosproject.cfg.ComponentConfigAdapter;
import org.onosproject.cfg.ConfigProperty;
import org.onosproject.core.GroupId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.group.DefaultGroup;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.DefaultGroupDescription;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupBuckets;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupEvent;
import org.onosproject.net.group.GroupKey;

/** The group rule on its own: pending is never a failure, ONOS's refusal is, a silent switch is overdue. */
public class GroupConfirmationTest {
    static final DeviceId D = NetTestTools.did("tor1");
    static final GroupKey K = new DefaultGroupKey("hlb:to:tor2".getBytes());
    static final List<GroupBucket> B = List.of(DefaultGroupBucket.createSelectGroupBucket(
            DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(1)).build()));

    final AtomicLong now = new AtomicLong(1_000_000);
    final GroupConfirmation rule = new GroupConfirmation(FakeOnos.APP, () -> 10, now::get);

    static DefaultGroup group(Group.GroupState state, List<GroupBucket> buckets) {
        DefaultGroup g = new DefaultGroup(GroupId.valueOf(7), new DefaultGroupDescription(D,
                GroupDescription.Type.SELECT, new GroupBuckets(buckets), K, 7, FakeOnos.APP));
        g.setState(state);
        return g;
    }

    @Test
    public void aGroupPendingTheStatsPollIsHeldUntilTwoPollsHavePassed() {
        rule.writing(D, K);
        Group pending = group(Group.GroupState.PENDING_ADD, B);
        assertEquals(State.PENDING, rule.state(D, K, pending, B));
        assertTrue(rule.holds(D, K, pending, B));
        assertEquals(22_000, rule.overdueAfterMillis());
        now.addAndGet(22_000);
        assertEquals("one poll may have just missed it", State.PENDING, rule.state(D, K, pending, B));
        now.addAndGet(1);
        assertEquals(State.OVERDUE, rule.state(D, K, pending, B));
        assertFalse(rule.holds(D, K, pending, B));
        rule.writing(D, K);   // written again: pending from now
        assertEquals(State.PENDING, rule.state(D, K, group(Group.GroupState.PENDING_UPDATE, B), B));
        assertEquals(State.CONFIRMED, rule.state(D, K, group(Group.GroupState.ADDED, B), B));
    }

    @Test
    public void whatOnosReportsRefusedIsRefusedUntilWrittenAgain() {
        rule.writing(D, K);
        DefaultGroup g = group(Group.GroupState.PENDING_ADD, B);
        rule.event(new GroupEvent(GroupEvent.Type.GROUP_ADD_FAILED, g));
        assertEquals(State.REFUSED, rule.state(D, K, g, B));
        assertTrue(rule.refusal(D, K), rule.refusal(D, K).contains("GROUP_ADD_FAILED"));
        rule.writing(D, K);
        assertEquals(State.PENDING, rule.state(D, K, g, B));
        rule.event(new GroupEvent(GroupEvent.Type.GROUP_UPDATE_FAILED, g));
        assertEquals(State.REFUSED, rule.state(D, K, g, B));
    }

    @Test
    public void absentDeletedAndOtherBucketsAreNotHeld() {
        assertEquals(State.ABSENT, rule.state(D, K, null, B));
        assertEquals(State.ABSENT, rule.state(D, K, group(Group.GroupState.PENDING_DELETE, B), B));
        assertEquals(State.OTHER_BUCKETS, rule.state(D, K, group(Group.GroupState.ADDED, List.of()), B));
    }

    @Test
    public void thePollIntervalIsTheOpenFlowGroupProvidersConfiguredOne() {
        class Config extends ComponentConfigAdapter {
            String value;

            @Override
            public Set<String> getComponentNames() {
                return value == null ? Set.of() : Set.of(GroupConfirmation.GROUP_PROVIDER);
            }

            @Override
            public ConfigProperty getProperty(String component, String name) {
                if (!GroupConfirmation.GROUP_PROVIDER.equals(component) || !GroupConfirmation.POLL_INTERVAL.equals(name)) {
                    return null;
                }
                return ConfigProperty.setProperty(ConfigProperty.defineProperty(name, ConfigProperty.Type.INTEGER,
                        "poll", "10"), value);
            }
        }
        Config cfg = new Config();
        GroupConfirmation r = new GroupConfirmation(FakeOnos.APP, GroupConfirmation.pollInterval(() -> cfg), now::get);
        assertEquals("no OpenFlow group provider: its default", 22_000, r.overdueAfterMillis());
        cfg.value = "30";
        assertEquals(62_000, r.overdueAfterMillis());
        cfg.value = "1";
        assertEquals(4_000, r.overdueAfterMillis());
        GroupConfirmation none = new GroupConfirmation(FakeOnos.APP, GroupConfirmation.pollInterval(() -> null),
                now::get);
        assertEquals("no configuration service", 22_000, none.overdueAfterMillis());
    }
}
