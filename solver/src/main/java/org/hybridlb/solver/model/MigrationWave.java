package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Steps that may be applied together; a wave is verified before the next one starts. */
public final class MigrationWave {
    public final int wave;
    public final List<MigrationStep> steps;

    @JsonCreator
    public MigrationWave(@JsonProperty("wave") int wave,
                         @JsonProperty("steps") List<MigrationStep> steps) {
        this.wave = wave;
        this.steps = List.copyOf(steps);
    }
}
