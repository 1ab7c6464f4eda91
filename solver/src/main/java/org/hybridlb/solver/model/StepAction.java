package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** The kinds of migration step (ARCHITECTURE "Migration plan"); each has an inverse. */
public enum StepAction {
    ANNOUNCE_ON_SMUX("announce-on-smux"),
    WITHDRAW_FROM_SMUX("withdraw-from-smux"),
    WITHDRAW_FROM_HMUX("withdraw-from-hmux"),
    ANNOUNCE_ON_HMUX("announce-on-hmux"),
    ADD_DIP("add-dip"),
    REMOVE_DIP("remove-dip");

    private final String json;

    StepAction(String json) {
        this.json = json;
    }

    @JsonValue
    public String json() {
        return json;
    }

    /** The step that undoes this one. */
    public StepAction inverse() {
        switch (this) {
            case ANNOUNCE_ON_SMUX: return WITHDRAW_FROM_SMUX;
            case WITHDRAW_FROM_SMUX: return ANNOUNCE_ON_SMUX;
            case WITHDRAW_FROM_HMUX: return ANNOUNCE_ON_HMUX;
            case ANNOUNCE_ON_HMUX: return WITHDRAW_FROM_HMUX;
            case ADD_DIP: return REMOVE_DIP;
            case REMOVE_DIP: return ADD_DIP;
            default: throw new AssertionError(this);
        }
    }

    @JsonCreator
    public static StepAction parse(String text) {
        for (StepAction a : values()) {
            if (a.json.equals(text)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown migration step action '" + text + "'");
    }
}
