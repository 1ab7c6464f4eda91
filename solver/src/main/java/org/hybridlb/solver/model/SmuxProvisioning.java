package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Why an assignment needs its SMuxes (Duet §3.8.2): SMux traffic in bytes/s in each situation
 * and the count at the SMux capacity used. {@code failure} is the worst of the failure scenarios
 * (one pod, or three switches) on top of the unassigned traffic; {@code transient} is the
 * unassigned traffic plus the traffic of VIPs that migrate through the SMuxes.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class SmuxProvisioning {
    public final double capacityBps;
    public final double unassignedBps;
    public final double failureBps;
    public final String worstFailure;
    public final List<String> failedSwitches;
    public final double transientBps;
    public final int smuxCount;

    @JsonCreator
    public SmuxProvisioning(@JsonProperty("capacityBps") double capacityBps,
                            @JsonProperty("unassignedBps") double unassignedBps,
                            @JsonProperty("failureBps") double failureBps,
                            @JsonProperty("worstFailure") String worstFailure,
                            @JsonProperty("failedSwitches") List<String> failedSwitches,
                            @JsonProperty("transientBps") double transientBps,
                            @JsonProperty("smuxCount") int smuxCount) {
        this.capacityBps = capacityBps;
        this.unassignedBps = unassignedBps;
        this.failureBps = failureBps;
        this.worstFailure = worstFailure;
        this.failedSwitches = failedSwitches == null ? List.of() : List.copyOf(failedSwitches);
        this.transientBps = transientBps;
        this.smuxCount = smuxCount;
    }
}
