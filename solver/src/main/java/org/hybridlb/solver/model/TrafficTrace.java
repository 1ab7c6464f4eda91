package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** A traffic trace: consecutive intervals. */
public final class TrafficTrace {
    public final List<TrafficInterval> intervals;

    @JsonCreator
    public TrafficTrace(@JsonProperty("intervals") List<TrafficInterval> intervals) {
        this.intervals = List.copyOf(intervals);
    }
}
