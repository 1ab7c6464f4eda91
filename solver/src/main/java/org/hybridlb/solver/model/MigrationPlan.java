package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.List;

/** Ordered waves taking the installed assignment to a new one (Duet §3.4.2). */
public final class MigrationPlan {
    public final List<MigrationWave> waves;

    @JsonCreator
    public MigrationPlan(@JsonProperty("waves") List<MigrationWave> waves) {
        this.waves = List.copyOf(waves);
    }

    /** Every step in order. */
    @JsonIgnore
    public List<MigrationStep> steps() {
        List<MigrationStep> all = new ArrayList<>();
        waves.forEach(w -> all.addAll(w.steps));
        return all;
    }

    /** The plan that rolls this one back: inverse steps, waves and steps in reverse order. */
    public MigrationPlan inverse() {
        List<MigrationWave> back = new ArrayList<>();
        for (int i = waves.size() - 1; i >= 0; i--) {
            MigrationWave w = waves.get(i);
            List<MigrationStep> steps = new ArrayList<>();
            for (int j = w.steps.size() - 1; j >= 0; j--) {
                steps.add(w.steps.get(j).inverse());
            }
            back.add(new MigrationWave(back.size(), inversePhase(w.phase), w.transientSmuxBps, steps));
        }
        return new MigrationPlan(back);
    }

    private static String inversePhase(String phase) {
        if ("withdraw".equals(phase)) {
            return "announce";
        }
        if ("announce".equals(phase)) {
            return "withdraw";
        }
        return phase;
    }
}
