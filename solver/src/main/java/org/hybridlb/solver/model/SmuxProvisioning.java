package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Why an assignment needs its SMuxes (Duet §3.8.2): SMux traffic in bits/s in each situation
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
    /** Fig. 3.19: max link utilisation (of bandwidth) without failure and in the worst failure scenario tried. */
    public final Double baselineMaxLinkUtilisation;
    public final Double failureMaxLinkUtilisation;
    /** The scenario behind failureMaxLinkUtilisation, and how many scenarios were tried. */
    public final String worstLinkFailure;
    public final Integer failureScenarios;

    public SmuxProvisioning(double capacityBps, double unassignedBps, double failureBps, String worstFailure,
                            List<String> failedSwitches, double transientBps, int smuxCount) {
        this(capacityBps, unassignedBps, failureBps, worstFailure, failedSwitches, transientBps, smuxCount,
                null, null, null, null);
    }

    /** The same with the link utilisation under failures. */
    public SmuxProvisioning withLinkFailures(double baseline, double worst, String scenario, int scenarios) {
        return new SmuxProvisioning(capacityBps, unassignedBps, failureBps, worstFailure, failedSwitches,
                transientBps, smuxCount, baseline, worst, scenario, scenarios);
    }

    @JsonCreator
    public SmuxProvisioning(@JsonProperty("capacityBps") double capacityBps,
                            @JsonProperty("unassignedBps") double unassignedBps,
                            @JsonProperty("failureBps") double failureBps,
                            @JsonProperty("worstFailure") String worstFailure,
                            @JsonProperty("failedSwitches") List<String> failedSwitches,
                            @JsonProperty("transientBps") double transientBps,
                            @JsonProperty("smuxCount") int smuxCount,
                            @JsonProperty("baselineMaxLinkUtilisation") Double baselineMaxLinkUtilisation,
                            @JsonProperty("failureMaxLinkUtilisation") Double failureMaxLinkUtilisation,
                            @JsonProperty("worstLinkFailure") String worstLinkFailure,
                            @JsonProperty("failureScenarios") Integer failureScenarios) {
        this.baselineMaxLinkUtilisation = baselineMaxLinkUtilisation;
        this.failureMaxLinkUtilisation = failureMaxLinkUtilisation;
        this.worstLinkFailure = worstLinkFailure;
        this.failureScenarios = failureScenarios;
        this.capacityBps = capacityBps;
        this.unassignedBps = unassignedBps;
        this.failureBps = failureBps;
        this.worstFailure = worstFailure;
        this.failedSwitches = failedSwitches == null ? List.of() : List.copyOf(failedSwitches);
        this.transientBps = transientBps;
        this.smuxCount = smuxCount;
    }
}
