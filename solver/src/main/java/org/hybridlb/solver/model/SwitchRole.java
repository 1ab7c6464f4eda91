package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Layer of a switch in a Clos/fat-tree fabric. */
public enum SwitchRole {
    CORE, AGG, TOR;

    @JsonValue
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static SwitchRole parse(String text) {
        return valueOf(text.toUpperCase(Locale.ROOT));
    }
}
