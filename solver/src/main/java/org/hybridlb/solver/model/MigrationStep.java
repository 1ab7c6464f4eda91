package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/** One reversible step of a migration: an action on a VIP, at a switch or for a DIP. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class MigrationStep {
    public final StepAction action;
    public final String vip;
    /** The HMux switch for announce/withdraw-on-hmux steps. */
    public final String switchId;
    /** The DIP for add/remove-dip steps. */
    public final String dip;

    @JsonCreator
    public MigrationStep(@JsonProperty("action") StepAction action,
                         @JsonProperty("vip") String vip,
                         @JsonProperty("switchId") String switchId,
                         @JsonProperty("dip") String dip) {
        this.action = action;
        this.vip = vip;
        this.switchId = switchId;
        this.dip = dip;
    }

    /** The step that rolls this one back. */
    public MigrationStep inverse() {
        return new MigrationStep(action.inverse(), vip, switchId, dip);
    }

    @Override
    public String toString() {
        return action.json() + " " + vip + (switchId != null ? " @" + switchId : "")
                + (dip != null ? " dip " + dip : "");
    }
}
