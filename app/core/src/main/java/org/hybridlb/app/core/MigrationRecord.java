package org.hybridlb.app.core;

import java.util.Map;
import org.hybridlb.solver.model.MigrationPlan;

/** A migration the controller ran or runs: its plan, progress and outcome (JSON in REST and state). */
public final class MigrationRecord {
    public static final String RUNNING = "running";
    public static final String DONE = "done";
    public static final String ROLLED_BACK = "rolled-back";
    public static final String FAILED = "failed";
    public static final String SUPERSEDED = "superseded";
    public static final String INTERRUPTED = "interrupted";

    public long id;
    /** Why it started: "interval", "vip added", "switch t1 down", "reassign now", ... */
    public String trigger;
    public String state;
    /** Index of the next wave to apply (= waves applied and verified so far). */
    public int nextWave;
    public MigrationPlan plan;
    /** The assignment it goes to. */
    public Map<String, String> target;
    public String error;
    public long startedMillis;
    public Long endedMillis;
}
