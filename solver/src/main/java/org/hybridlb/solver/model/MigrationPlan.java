package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Ordered waves taking the installed assignment to a new one (Duet §3.4.2). */
public final class MigrationPlan {
    public final List<MigrationWave> waves;

    @JsonCreator
    public MigrationPlan(@JsonProperty("waves") List<MigrationWave> waves) {
        this.waves = List.copyOf(waves);
    }
}
