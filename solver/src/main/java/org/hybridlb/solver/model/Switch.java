package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/** A fabric switch that may act as an HMux. Core switches have no pod. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class Switch {
    public final String id;
    public final SwitchRole role;
    public final Integer pod;
    public final TableCapacity tables;

    @JsonCreator
    public Switch(@JsonProperty("id") String id,
                  @JsonProperty("role") SwitchRole role,
                  @JsonProperty("pod") Integer pod,
                  @JsonProperty("tables") TableCapacity tables) {
        this.id = id;
        this.role = role;
        this.pod = pod;
        this.tables = tables == null ? TableCapacity.DEFAULTS : tables;
    }
}
