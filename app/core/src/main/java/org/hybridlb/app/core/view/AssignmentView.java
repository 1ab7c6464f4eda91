package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Utilisation;

/**
 * {@code GET /assignment}: where every installed VIP is, where the last assignment wants it and
 * why some cannot go there (held pools, down or drained switches, unhealthy DIPs). The fields of
 * the last assignment ({@code algorithm} to {@code utilisation}) are absent before the first one,
 * {@code lastError} while the last round had none.
 */
@JsonPropertyOrder({"installed", "algorithm", "target", "mru", "hmuxTrafficShare", "smuxCount", "utilisation",
        "heldOnSmuxes", "downSwitches", "cutOffSwitches", "hmuxUnfit", "hashUnmatched", "drainedSwitches", "unhealthyDips",
        "dipHealth", "migrating", "lastError"})
public final class AssignmentView {
    /** VIP -> switch id, or {@code smux}. */
    public final Map<String, String> installed;
    public final String algorithm;
    public final Map<String, String> target;
    public final Double mru;
    public final Double hmuxTrafficShare;
    public final Integer smuxCount;
    public final Utilisation utilisation;
    public final Map<String, HeldVip> heldOnSmuxes;
    /** Reported down, or cut off from the part of the fabric the controller serves from. */
    public final List<String> downSwitches;
    /** Live switches cut off from the served part of the fabric, with why (they count as down). */
    public final Map<String, String> cutOffSwitches;
    /** Switches that cannot be an HMux although meant to, with why and what to change. */
    public final Map<String, String> hmuxUnfit;
    /**
     * VIPs the SMuxes could not hash as some switches would as their HMux (their pools, those
     * switches' hash contract): the VIP stays off those switches.
     */
    public final Map<String, HashUnmatched> hashUnmatched;
    public final List<String> drainedSwitches;
    /** Failed and unreachable DIPs, sorted. */
    public final List<String> unhealthyDips;
    public final Map<String, DipHealth> dipHealth;
    public final boolean migrating;
    public final String lastError;

    @JsonCreator
    public AssignmentView(@JsonProperty("installed") Map<String, String> installed,
                          @JsonProperty("algorithm") String algorithm,
                          @JsonProperty("target") Map<String, String> target,
                          @JsonProperty("mru") Double mru,
                          @JsonProperty("hmuxTrafficShare") Double hmuxTrafficShare,
                          @JsonProperty("smuxCount") Integer smuxCount,
                          @JsonProperty("utilisation") Utilisation utilisation,
                          @JsonProperty("heldOnSmuxes") Map<String, HeldVip> heldOnSmuxes,
                          @JsonProperty("downSwitches") List<String> downSwitches,
                          @JsonProperty("cutOffSwitches") Map<String, String> cutOffSwitches,
                          @JsonProperty("hmuxUnfit") Map<String, String> hmuxUnfit,
                          @JsonProperty("hashUnmatched") Map<String, HashUnmatched> hashUnmatched,
                          @JsonProperty("drainedSwitches") List<String> drainedSwitches,
                          @JsonProperty("unhealthyDips") List<String> unhealthyDips,
                          @JsonProperty("dipHealth") Map<String, DipHealth> dipHealth,
                          @JsonProperty("migrating") boolean migrating,
                          @JsonProperty("lastError") String lastError) {
        this.installed = Views.map(installed);
        this.algorithm = algorithm;
        this.target = target == null ? null : Views.map(target);
        this.mru = mru;
        this.hmuxTrafficShare = hmuxTrafficShare;
        this.smuxCount = smuxCount;
        this.utilisation = utilisation;
        this.heldOnSmuxes = Views.map(heldOnSmuxes);
        this.downSwitches = Views.list(downSwitches);
        this.cutOffSwitches = Views.map(cutOffSwitches);
        this.hmuxUnfit = Views.map(hmuxUnfit);
        this.hashUnmatched = Views.map(hashUnmatched);
        this.drainedSwitches = Views.list(drainedSwitches);
        this.unhealthyDips = Views.list(unhealthyDips);
        this.dipHealth = Views.map(dipHealth);
        this.migrating = migrating;
        this.lastError = lastError;
    }

    /**
     * A VIP kept on the SMuxes until no connection they pin would change DIP on an HMux: its pool
     * grew (Duet §3.5.2), or it moves to an HMux whose hash contract differs from its last one's.
     */
    @JsonPropertyOrder({"sinceMillis", "divergingConnections", "toward", "reason"})
    public static final class HeldVip {
        /** Epoch milliseconds since it is held. */
        public final long sinceMillis;
        /**
         * Pinned connections an HMux would send to another DIP, summed over the live SMuxes at the
         * last count; -1 when an SMux could not be asked; absent before the grown pool is installed
         * (before the SMuxes hash as the switch it moves to).
         */
        public final Long divergingConnections;
        /** The HMux it moves to (a change of hash contract); absent for a grown pool. */
        public final String toward;
        public final String reason;

        @JsonCreator
        public HeldVip(@JsonProperty("sinceMillis") long sinceMillis,
                       @JsonProperty("divergingConnections") Long divergingConnections,
                       @JsonProperty("toward") String toward,
                       @JsonProperty("reason") String reason) {
            this.sinceMillis = sinceMillis;
            this.divergingConnections = divergingConnections;
            this.toward = toward;
            this.reason = reason;
        }
    }

    /** Switches a VIP stays off because the SMuxes could not hash its pools as they do, and why. */
    @JsonPropertyOrder({"switches", "reason"})
    public static final class HashUnmatched {
        public final List<String> switches;
        public final String reason;

        @JsonCreator
        public HashUnmatched(@JsonProperty("switches") List<String> switches, @JsonProperty("reason") String reason) {
            this.switches = Views.list(switches);
            this.reason = reason;
        }
    }

    /** Why a DIP is out of its pools. */
    @JsonPropertyOrder({"state", "reason", "switch"})
    public static final class DipHealth {
        public static final String FAILED = "failed";
        public static final String UNREACHABLE = "unreachable";

        /** {@link #FAILED} (its host agent says so) or {@link #UNREACHABLE} (its switch is down). */
        public final String state;
        public final String reason;
        /** The down switch it hangs off (unreachable only). */
        @JsonProperty("switch")
        public final String switchId;

        @JsonCreator
        public DipHealth(@JsonProperty("state") String state, @JsonProperty("reason") String reason,
                         @JsonProperty("switch") String switchId) {
            this.state = state;
            this.reason = reason;
            this.switchId = switchId;
        }
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
