package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where every VIP lives: a switch id (HMux) or {@link #SMUX}. Also the figures operators look
 * at first: HMux traffic share, maximum resource utilisation (MRU) and SMuxes needed.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class Assignment {
    /** Placement value for a VIP served only by the software muxes. */
    public static final String SMUX = "smux";

    public final String algorithm;
    public final Map<String, String> assignment;
    public final double hmuxTrafficShare;
    public final double mru;
    public final int smuxCount;
    public final Utilisation utilisation;
    /** How smuxCount was obtained (§3.8.2); null when not computed. */
    public final SmuxProvisioning provisioning;
    /** Objective, proven bound and gap when an exact solver (ILP) produced this; null otherwise. */
    public final SolveReport solver;

    public Assignment(String algorithm, Map<String, String> assignment, double hmuxTrafficShare,
                      double mru, int smuxCount, Utilisation utilisation) {
        this(algorithm, assignment, hmuxTrafficShare, mru, smuxCount, utilisation, null);
    }

    public Assignment(String algorithm, Map<String, String> assignment, double hmuxTrafficShare, double mru,
                      int smuxCount, Utilisation utilisation, SmuxProvisioning provisioning) {
        this(algorithm, assignment, hmuxTrafficShare, mru, smuxCount, utilisation, provisioning, null);
    }

    public Assignment(String algorithm, Map<String, String> assignment, double hmuxTrafficShare, double mru,
                      int smuxCount, Utilisation utilisation, SmuxProvisioning provisioning, SolveReport solver) {
        this.solver = solver;
        this.provisioning = provisioning;
        this.algorithm = algorithm;
        this.assignment = Collections.unmodifiableMap(new LinkedHashMap<>(assignment));
        this.hmuxTrafficShare = hmuxTrafficShare;
        this.mru = mru;
        this.smuxCount = smuxCount;
        this.utilisation = utilisation;
    }

    /**
     * From JSON: only {@code algorithm} and {@code assignment} are required (the schema says so),
     * so that operators can write the assignment a migration goes from or to by hand.
     */
    @JsonCreator
    static Assignment fromJson(@JsonProperty("algorithm") String algorithm,
                               @JsonProperty("assignment") Map<String, String> assignment,
                               @JsonProperty("hmuxTrafficShare") Double hmuxTrafficShare,
                               @JsonProperty("mru") Double mru,
                               @JsonProperty("smuxCount") Integer smuxCount,
                               @JsonProperty("utilisation") Utilisation utilisation,
                               @JsonProperty("provisioning") SmuxProvisioning provisioning,
                               @JsonProperty("solver") SolveReport solver) {
        return new Assignment(algorithm, assignment, hmuxTrafficShare == null ? 0 : hmuxTrafficShare,
                mru == null ? 0 : mru, smuxCount == null ? 0 : smuxCount, utilisation, provisioning, solver);
    }

    /** The same assignment with an exact solver's report attached. */
    public Assignment withSolver(SolveReport report) {
        return new Assignment(algorithm, assignment, hmuxTrafficShare, mru, smuxCount, utilisation, provisioning,
                report);
    }

    /** The switch a VIP is on, or {@link #SMUX} (also for VIPs this assignment does not name). */
    public String placementOf(String vip) {
        return assignment.getOrDefault(vip, SMUX);
    }
}
