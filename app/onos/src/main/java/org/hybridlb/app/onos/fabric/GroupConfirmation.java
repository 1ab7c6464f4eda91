package org.hybridlb.app.onos.fabric;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.onosproject.cfg.ComponentConfigService;
import org.onosproject.cfg.ConfigProperty;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupEvent;
import org.onosproject.net.group.GroupKey;
import org.onosproject.net.group.GroupListener;

/**
 * When a group the app wrote through ONOS's GroupService counts as on its device, whatever the
 * group provider's poll interval.
 *
 * <p>ONOS 2.7's OpenFlow group provider marks a group ADDED only when its group-stats poll finds
 * the group on the switch ({@value #POLL_INTERVAL} of {@value #GROUP_PROVIDER}, 10 s by default),
 * so a wait for ADDED with a fixed timeout rolls good waves back whenever the poll is the slower.
 * The rule here is the one ONOS's own pipeliners follow (they go on once the group store holds a
 * group, and take GROUP_ADDED as confirmation):
 * <ul>
 * <li>{@link State#PENDING}: the group store holds the group with the buckets written and ONOS has
 *     not reported it refused. The flows that point at it may follow: they go after it on the same
 *     switch connection and their batch is confirmed by a barrier, so a switch that lacks the
 *     group refuses them and the batch fails. Pending is never a failure.</li>
 * <li>{@link State#CONFIRMED}: ONOS reports it ADDED with those buckets (after a poll).</li>
 * <li>{@link State#REFUSED}: ONOS reported GROUP_ADD_FAILED or GROUP_UPDATE_FAILED for it since it
 *     was written (the switch answered with an error): the write has failed.</li>
 * <li>{@link State#OVERDUE}: still pending two poll intervals and {@value #MARGIN_MILLIS} ms after
 *     it was written (a poll came and did not find it): read-back counts it as missing, so the
 *     core's repair writes it again.</li>
 * </ul>
 * Thread-safe: ONOS delivers the events on its event thread, which this never blocks.
 */
public final class GroupConfirmation implements GroupListener {
    /** ONOS's OpenFlow group provider (component name) and its poll interval property (seconds). */
    public static final String GROUP_PROVIDER = "org.onosproject.provider.of.group.impl.OpenFlowGroupProvider";
    public static final String POLL_INTERVAL = "groupPollInterval";
    /** The provider's default {@value #POLL_INTERVAL} (seconds). */
    public static final int DEFAULT_POLL_SECONDS = 10;
    /** Slack after the second poll before a pending group counts as overdue. */
    public static final long MARGIN_MILLIS = 2000;

    /** Where a group the app wants stands (see the class comment). */
    public enum State {
        CONFIRMED, PENDING, OVERDUE, REFUSED,
        /** Not in the group store (or being deleted). */
        ABSENT,
        /** In the store with other buckets. */
        OTHER_BUCKETS
    }

    private final ApplicationId appId;
    private final IntSupplier pollSeconds;
    private final LongSupplier clock;
    /** (device, key) -> when the app last wrote it (or first saw it pending), epoch ms. */
    private final Map<Key, Long> pendingSince = new ConcurrentHashMap<>();
    /** (device, key) -> what ONOS reported, for groups refused since their last write. */
    private final Map<Key, String> refused = new ConcurrentHashMap<>();

    /**
     * @param pollSeconds the group provider's poll interval, read at each use
     *     ({@link #pollInterval(Supplier)})
     * @param clockMillis the clock pending times are measured with
     */
    public GroupConfirmation(ApplicationId appId, IntSupplier pollSeconds, LongSupplier clockMillis) {
        this.appId = appId;
        this.pollSeconds = pollSeconds;
        this.clock = clockMillis;
    }

    /**
     * The OpenFlow group provider's configured poll interval from ONOS's component configuration;
     * {@value #DEFAULT_POLL_SECONDS} s when the provider or the configuration service is absent.
     */
    public static IntSupplier pollInterval(Supplier<ComponentConfigService> config) {
        return () -> {
            ComponentConfigService cfg = config.get();
            try {
                if (cfg != null && cfg.getComponentNames().contains(GROUP_PROVIDER)) {
                    ConfigProperty p = cfg.getProperty(GROUP_PROVIDER, POLL_INTERVAL);
                    if (p != null && p.asInteger() > 0) {
                        return p.asInteger();
                    }
                }
            } catch (RuntimeException e) {
                // unparsable or unavailable: the provider's default
            }
            return DEFAULT_POLL_SECONDS;
        };
    }

    /** How long a group may stay pending after its write before it is overdue. */
    public long overdueAfterMillis() {
        return 2L * pollSeconds.getAsInt() * 1000 + MARGIN_MILLIS;
    }

    /** The app (re)writes group {@code key} on {@code device} now: earlier refusals no longer count. */
    public void writing(DeviceId device, GroupKey key) {
        Key k = new Key(device, key);
        refused.remove(k);
        pendingSince.put(k, clock.getAsLong());
    }

    /** Where the app's group {@code key} on {@code device} stands; {@code group} is the store's (or null). */
    public State state(DeviceId device, GroupKey key, Group group, List<GroupBucket> wanted) {
        Key k = new Key(device, key);
        if (refused.containsKey(k)) {
            return State.REFUSED;
        }
        if (group == null || group.state() == Group.GroupState.PENDING_DELETE) {
            return State.ABSENT;
        }
        if (!group.buckets().buckets().equals(wanted)) {
            return State.OTHER_BUCKETS;
        }
        if (group.state() == Group.GroupState.ADDED) {
            pendingSince.remove(k);
            return State.CONFIRMED;
        }
        long since = pendingSince.computeIfAbsent(k, x -> clock.getAsLong());
        return clock.getAsLong() - since > overdueAfterMillis() ? State.OVERDUE : State.PENDING;
    }

    /** True when the group is on the device as far as ONOS can tell now: confirmed or pending. */
    public boolean holds(DeviceId device, GroupKey key, Group group, List<GroupBucket> wanted) {
        State s = state(device, key, group, wanted);
        return s == State.CONFIRMED || s == State.PENDING;
    }

    /** What ONOS reported when it refused the group, or null. */
    public String refusal(DeviceId device, GroupKey key) {
        return refused.get(new Key(device, key));
    }

    @Override
    public boolean isRelevant(GroupEvent event) {
        return appId == null || appId.equals(event.subject().appId());
    }

    @Override
    public void event(GroupEvent event) {
        Group g = event.subject();
        Key k = new Key(g.deviceId(), g.appCookie());
        switch (event.type()) {
            case GROUP_ADD_FAILED:
            case GROUP_UPDATE_FAILED:
                refused.put(k, "ONOS reported " + event.type() + " (the switch refused it)");
                break;
            case GROUP_ADDED:
            case GROUP_UPDATED:
                refused.remove(k);
                break;
            case GROUP_REMOVED:
                refused.remove(k);
                pendingSince.remove(k);
                break;
            default:
                break;
        }
    }

    /** A group of a device, by the app's key. */
    private static final class Key {
        final DeviceId device;
        final GroupKey key;

        Key(DeviceId device, GroupKey key) {
            this.device = device;
            this.key = key;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).device.equals(device) && Objects.equals(((Key) o).key, key);
        }

        @Override
        public int hashCode() {
            return Objects.hash(device, key);
        }
    }
}
