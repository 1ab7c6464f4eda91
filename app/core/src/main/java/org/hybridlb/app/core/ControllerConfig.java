package org.hybridlb.app.core;

import java.time.Duration;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.migration.PlannerOptions;

/** Knobs of the controller loop, immutable; {@code with*} copies. */
public final class ControllerConfig {
    /** Re-assignment period; zero disables the timer (events and "reassign now" still run). */
    public final Duration interval;
    /** The assignment algorithm by name (solver registry); Duet runs "sticky". */
    public final String algorithm;
    public final SolverOptions solver;
    public final PlannerOptions planner;
    /** How the SMuxes encapsulate: "gre" to match OVS HMuxes, "ipip" for P4/ASIC fabrics. */
    public final String smuxEncap;
    /** How long a REST call waits for the controller thread. */
    public final Duration requestTimeout;
    /**
     * Configuration changes wait this long before they reconcile, so that a burst of REST calls
     * (an operator script adding 1,000 VIPs) is planned once; zero reconciles on every change.
     */
    public final Duration settle;
    /**
     * A VIP whose pool grew while it was on an HMux stays on the SMuxes until no pinned
     * connection would change DIP on an HMux (Duet §3.5.2), but at most this long: then it may
     * return, and the connections that still diverge move (logged with their number).
     */
    public final Duration poolGrowthHoldMax;
    /**
     * The periodic re-assignment reads every device back (drift repair) at most this often;
     * reconciles on events (config, switch, SMux, DIP health, "reassign now", start) always do.
     * Zero: every reconcile.
     */
    public final Duration repairInterval;

    public ControllerConfig(Duration interval, String algorithm, SolverOptions solver, PlannerOptions planner,
                            String smuxEncap, Duration requestTimeout, Duration settle) {
        this(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle, Duration.ofMinutes(10),
                Duration.ofSeconds(30));
    }

    public ControllerConfig(Duration interval, String algorithm, SolverOptions solver, PlannerOptions planner,
                            String smuxEncap, Duration requestTimeout, Duration settle, Duration poolGrowthHoldMax,
                            Duration repairInterval) {
        if (interval.isNegative()) {
            throw new IllegalArgumentException("interval must not be negative");
        }
        if (!"gre".equals(smuxEncap) && !"ipip".equals(smuxEncap)) {
            throw new IllegalArgumentException("smuxEncap must be gre or ipip, got " + smuxEncap);
        }
        this.interval = interval;
        this.algorithm = algorithm;
        this.solver = solver;
        this.planner = planner;
        this.smuxEncap = smuxEncap;
        this.requestTimeout = requestTimeout;
        this.settle = settle;
        if (poolGrowthHoldMax.isNegative()) {
            throw new IllegalArgumentException("poolGrowthHoldMax must not be negative");
        }
        this.poolGrowthHoldMax = poolGrowthHoldMax;
        if (repairInterval.isNegative()) {
            throw new IllegalArgumentException("repairInterval must not be negative");
        }
        this.repairInterval = repairInterval;
    }

    public static ControllerConfig defaults() {
        return new ControllerConfig(Duration.ofSeconds(10), "sticky", SolverOptions.defaults(),
                PlannerOptions.defaults(), "gre", Duration.ofSeconds(30), Duration.ofMillis(100));
    }

    public ControllerConfig withInterval(Duration d) {
        return new ControllerConfig(d, algorithm, solver, planner, smuxEncap, requestTimeout, settle, poolGrowthHoldMax, repairInterval);
    }

    public ControllerConfig withAlgorithm(String a) {
        return new ControllerConfig(interval, a, solver, planner, smuxEncap, requestTimeout, settle, poolGrowthHoldMax, repairInterval);
    }

    public ControllerConfig withSolver(SolverOptions o) {
        return new ControllerConfig(interval, algorithm, o, planner, smuxEncap, requestTimeout, settle, poolGrowthHoldMax, repairInterval);
    }

    public ControllerConfig withPlanner(PlannerOptions o) {
        return new ControllerConfig(interval, algorithm, solver, o, smuxEncap, requestTimeout, settle, poolGrowthHoldMax, repairInterval);
    }

    public ControllerConfig withSettle(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, d, poolGrowthHoldMax, repairInterval);
    }

    public ControllerConfig withSmuxEncap(String e) {
        return new ControllerConfig(interval, algorithm, solver, planner, e, requestTimeout, settle, poolGrowthHoldMax, repairInterval);
    }

    public ControllerConfig withPoolGrowthHoldMax(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle, d, repairInterval);
    }

    public ControllerConfig withRepairInterval(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, d);
    }
}
