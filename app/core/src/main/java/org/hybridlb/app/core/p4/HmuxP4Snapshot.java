package org.hybridlb.app.core.p4;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.SwitchReading;

/**
 * One P4 switch as {@link HmuxP4Reader} read it: the reading the core diffs against, the entities
 * that are the controller's (what {@link HmuxP4Plan} reuses ids from and {@link P4Diff} compares
 * with), and the hop the switch's own routes give each SMux's address.
 */
public final class HmuxP4Snapshot {
    /** A switch that holds nothing of the controller's and routes to no SMux. */
    public static final HmuxP4Snapshot EMPTY = new HmuxP4Snapshot(SwitchReading.of(
            org.hybridlb.app.core.hmux.SwitchIntent.EMPTY), new P4State(), Map.of());

    public final SwitchReading reading;
    public final P4State ours;
    /** SMux id -> the {@code set_next_hop} action the switch routes its address with. */
    public final SortedMap<String, P4Action> smuxHops;

    public HmuxP4Snapshot(SwitchReading reading, P4State ours, Map<String, P4Action> smuxHops) {
        this.reading = reading;
        this.ours = ours;
        this.smuxHops = Collections.unmodifiableSortedMap(new TreeMap<>(smuxHops));
    }
}
