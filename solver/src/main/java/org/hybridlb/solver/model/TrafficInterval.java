package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Traffic of every active VIP over one measurement interval. */
public final class TrafficInterval {
    public final int index;
    public final long startSeconds;
    public final long durationSeconds;
    public final List<VipTraffic> vips;

    @JsonCreator
    public TrafficInterval(@JsonProperty("index") int index,
                           @JsonProperty("startSeconds") long startSeconds,
                           @JsonProperty("durationSeconds") long durationSeconds,
                           @JsonProperty("vips") List<VipTraffic> vips) {
        this.index = index;
        this.startSeconds = startSeconds;
        this.durationSeconds = durationSeconds;
        this.vips = List.copyOf(vips);
    }
}
