package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Steps that may be applied together, in any order or at once; a wave is verified before the
 * next one starts. {@code phase} says what kind of wave it is ("withdraw", "config",
 * "announce"); {@code transientSmuxBps} is the traffic (bits/s, like link and SMux capacities) of VIPs that live on an HMux before and
 * after the migration but are on the SMuxes only while this wave runs (the stepping stone).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class MigrationWave {
    public final int wave;
    public final String phase;
    public final Double transientSmuxBps;
    public final List<MigrationStep> steps;

    public MigrationWave(int wave, List<MigrationStep> steps) {
        this(wave, null, null, steps);
    }

    @JsonCreator
    public MigrationWave(@JsonProperty("wave") int wave,
                         @JsonProperty("phase") String phase,
                         @JsonProperty("transientSmuxBps") Double transientSmuxBps,
                         @JsonProperty("steps") List<MigrationStep> steps) {
        this.wave = wave;
        this.phase = phase;
        this.transientSmuxBps = transientSmuxBps;
        this.steps = List.copyOf(steps);
    }
}
