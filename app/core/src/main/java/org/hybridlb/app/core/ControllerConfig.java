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

    /**
     * A host that just started (ONOS discovering its links by LLDP) reports switches before their
     * links. A live switch that has never shown a live fabric link is not cut off from the served
     * part until every live switch has shown one, or this long after the start: otherwise every
     * start would fail over every HMux but one. Zero: cut off at once.
     */
    public final Duration discoveryGrace;

    /**
     * A VIP that leaves an HMux for one whose hash contract differs stays this long on the SMuxes
     * hashing as the switch it left, so that they pin its live connections (each sends a packet
     * within it) before they hash as its next switch ({@link ContractMoves}).
     */
    public final Duration contractPinTime;

    private ControllerConfig(Duration interval, String algorithm, SolverOptions solver, PlannerOptions planner,
                             String smuxEncap, Duration requestTimeout, Duration settle, Duration poolGrowthHoldMax,
                             Duration repairInterval, Duration discoveryGrace, Duration contractPinTime) {
        requireNotNegative("interval", interval);
        requireNotNegative("poolGrowthHoldMax", poolGrowthHoldMax);
        requireNotNegative("repairInterval", repairInterval);
        requireNotNegative("discoveryGrace", discoveryGrace);
        requireNotNegative("contractPinTime", contractPinTime);
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
        this.poolGrowthHoldMax = poolGrowthHoldMax;
        this.repairInterval = repairInterval;
        this.discoveryGrace = discoveryGrace;
        this.contractPinTime = contractPinTime;
    }

    private static void requireNotNegative(String name, Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative");
        }
    }

    public static ControllerConfig defaults() {
        return new ControllerConfig(Duration.ofSeconds(10), "sticky", SolverOptions.defaults(),
                PlannerOptions.defaults(), "gre", Duration.ofSeconds(30), Duration.ofMillis(100),
                Duration.ofMinutes(10), Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofSeconds(10));
    }

    public ControllerConfig withInterval(Duration d) {
        return new ControllerConfig(d, algorithm, solver, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withAlgorithm(String a) {
        return new ControllerConfig(interval, a, solver, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withSolver(SolverOptions o) {
        return new ControllerConfig(interval, algorithm, o, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withPlanner(PlannerOptions o) {
        return new ControllerConfig(interval, algorithm, solver, o, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withSettle(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, d,
                poolGrowthHoldMax, repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withSmuxEncap(String e) {
        return new ControllerConfig(interval, algorithm, solver, planner, e, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withPoolGrowthHoldMax(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle, d,
                repairInterval, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withRepairInterval(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, d, discoveryGrace, contractPinTime);
    }

    public ControllerConfig withDiscoveryGrace(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, d, contractPinTime);
    }

    public ControllerConfig withContractPinTime(Duration d) {
        return new ControllerConfig(interval, algorithm, solver, planner, smuxEncap, requestTimeout, settle,
                poolGrowthHoldMax, repairInterval, discoveryGrace, d);
    }
}
