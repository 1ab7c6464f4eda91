package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Traffic of every active VIP over one measurement interval. {@code index} names the interval
 * (unique in a trace; {@code --interval N} picks the interval whose index is N). Without
 * {@code durationSeconds} an interval lasts {@link #DEFAULT_DURATION_SECONDS} (Duet's 10
 * minutes); without {@code startSeconds} it starts at index × duration. Only plots and reports
 * use the two: rates are per second already.
 */
public final class TrafficInterval {
    public static final long DEFAULT_DURATION_SECONDS = 600;

    public final int index;
    public final long startSeconds;
    public final long durationSeconds;
    public final List<VipTraffic> vips;

    public TrafficInterval(int index, long startSeconds, long durationSeconds, List<VipTraffic> vips) {
        this.index = index;
        this.startSeconds = startSeconds;
        this.durationSeconds = durationSeconds;
        this.vips = List.copyOf(vips);
    }

    @JsonCreator
    static TrafficInterval fromJson(@JsonProperty("index") int index,
                                    @JsonProperty("startSeconds") Long startSeconds,
                                    @JsonProperty("durationSeconds") Long durationSeconds,
                                    @JsonProperty("vips") List<VipTraffic> vips) {
        long duration = durationSeconds != null ? durationSeconds : DEFAULT_DURATION_SECONDS;
        return new TrafficInterval(index, startSeconds != null ? startSeconds : index * duration, duration, vips);
    }
}
