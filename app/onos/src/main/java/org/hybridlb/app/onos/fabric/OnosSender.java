package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.hybridlb.app.core.port.SouthboundException;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleOperationsContext;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.group.DefaultGroupDescription;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupBuckets;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupKey;
import org.onosproject.net.group.GroupService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends to ONOS and reads what ONOS holds for the app. A group counts as written once ONOS's group
 * store holds it as written and ONOS has not reported it refused ({@link GroupConfirmation}: never
 * a wait for the device's group-stats poll); a flow batch once ONOS confirms it (a device barrier).
 */
final class OnosSender {
    private static final Logger log = LoggerFactory.getLogger(OnosSender.class);
    private static final long POLL_MILLIS = 5;

    private final ApplicationId appId;
    private final FlowRuleService flows;
    private final GroupService groups;
    private final GroupConfirmation confirmation;
    private final long timeoutMillis;

    OnosSender(ApplicationId appId, FlowRuleService flows, GroupService groups, GroupConfirmation confirmation,
               long timeoutMillis) {
        this.appId = appId;
        this.flows = flows;
        this.groups = groups;
        this.confirmation = confirmation;
        this.timeoutMillis = timeoutMillis;
    }

    ApplicationId appId() {
        return appId;
    }

    GroupConfirmation confirmation() {
        return confirmation;
    }

    /** The app's live flows (ADDED or PENDING_ADD), by device. */
    Map<DeviceId, List<FlowEntry>> flowsByDevice() {
        Map<DeviceId, List<FlowEntry>> out = new HashMap<>();
        for (FlowEntry e : flows.getFlowEntriesById(appId)) {
            if (e.state() == FlowEntry.FlowEntryState.ADDED || e.state() == FlowEntry.FlowEntryState.PENDING_ADD) {
                out.computeIfAbsent(e.deviceId(), k -> new ArrayList<>()).add(e);
            }
        }
        return out;
    }

    /** Every application's live flows on {@code device} (a P4 device's: the fabric's routes too). */
    List<FlowEntry> deviceFlows(DeviceId device) {
        List<FlowEntry> out = new ArrayList<>();
        for (FlowEntry e : flows.getFlowEntries(device)) {
            if (e.state() == FlowEntry.FlowEntryState.ADDED || e.state() == FlowEntry.FlowEntryState.PENDING_ADD) {
                out.add(e);
            }
        }
        return out;
    }

    /** Every application's groups on {@code device}. */
    List<Group> deviceGroups(DeviceId device) {
        List<Group> out = new ArrayList<>();
        Iterable<Group> g = groups.getGroups(device);
        if (g != null) {
            g.forEach(out::add);
        }
        return out;
    }

    /** The app's groups on {@code device}. */
    List<Group> groups(DeviceId device) {
        List<Group> out = new ArrayList<>();
        Iterable<Group> g = groups.getGroups(device, appId);
        if (g != null) {
            g.forEach(out::add);
        }
        return out;
    }

    Group group(DeviceId device, String key) {
        return groups.getGroup(device, OnosGroups.key(key));
    }

    /**
     * Makes group {@code key} on {@code device} hold exactly {@code buckets}: writes it unless it is
     * confirmed or pending with them, then waits (at most the timeout) until ONOS's group store holds it.
     */
    Group putGroup(DeviceId device, String keyText, GroupDescription.Type type, List<GroupBucket> buckets) {
        return putGroup(device, OnosGroups.key(keyText), keyText, type, buckets, null);
    }

    /**
     * The same for a group of any key ({@code keyText} names it in messages), with the group id
     * {@code givenId} when not null (P4 action profile groups: the id is the P4Runtime group id).
     */
    Group putGroup(DeviceId device, GroupKey key, String keyText, GroupDescription.Type type,
                   List<GroupBucket> buckets, Integer givenId) {
        Group g = groups.getGroup(device, key);
        GroupConfirmation.State before = confirmation.state(device, key, g, buckets);
        if (before == GroupConfirmation.State.CONFIRMED || before == GroupConfirmation.State.PENDING) {
            return g;
        }
        if (before == GroupConfirmation.State.OVERDUE) {
            log.warn("{}: group {} still not confirmed by ONOS {} ms after it was written: writing it again",
                    device, keyText, confirmation.overdueAfterMillis());
        }
        confirmation.writing(device, key);
        GroupBuckets gb = new GroupBuckets(buckets);
        if (g == null) {
            groups.addGroup(new DefaultGroupDescription(device, type, gb, key, givenId, appId));
        } else {
            groups.setBucketsForGroup(device, key, gb, key, appId);
        }
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (true) {
            Group now = groups.getGroup(device, key);
            GroupConfirmation.State s = confirmation.state(device, key, now, buckets);
            if (s == GroupConfirmation.State.CONFIRMED || s == GroupConfirmation.State.PENDING) {
                return now;
            }
            if (s == GroupConfirmation.State.REFUSED) {
                throw new SouthboundException(device + ": group " + keyText + " refused: "
                        + confirmation.refusal(device, key));
            }
            if (System.currentTimeMillis() > deadline) {
                throw new SouthboundException(device + ": ONOS's group store does not hold group " + keyText
                        + " as written " + timeoutMillis + " ms after the write"
                        + (now == null ? "" : " (state " + now.state() + ", " + s + ")"));
            }
            sleep();
        }
    }

    void removeGroups(List<Group> stale) {
        for (Group g : stale) {
            groups.removeGroup(g.deviceId(), g.appCookie(), appId);
        }
    }

    /** Submits one flow batch (its stages in order) and waits for ONOS to confirm it (device barrier). */
    void apply(FlowRuleOperations.Builder ops, String what) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        flows.apply(ops.build(new FlowRuleOperationsContext() {
            @Override
            public void onSuccess(FlowRuleOperations o) {
                done.complete(true);
            }

            @Override
            public void onError(FlowRuleOperations o) {
                done.complete(false);
            }
        }));
        try {
            if (!done.get(timeoutMillis, TimeUnit.MILLISECONDS)) {
                throw new SouthboundException(what + ": flow rule batch failed");
            }
        } catch (TimeoutException e) {
            throw new SouthboundException(what + ": flow rule batch not confirmed within " + timeoutMillis + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException(what + ": interrupted", e);
        } catch (ExecutionException e) {
            throw new SouthboundException(what + ": " + e.getCause(), e);
        }
    }

    /** Removes every flow and group of the app (deactivation). */
    void removeAll(Iterable<DeviceId> devices) {
        flows.removeFlowRulesById(appId);
        for (DeviceId d : devices) {
            for (Group g : groups(d)) {
                groups.removeGroup(d, g.appCookie(), appId);
            }
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted", e);
        }
    }
}
