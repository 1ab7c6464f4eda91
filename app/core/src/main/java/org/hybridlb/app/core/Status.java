package org.hybridlb.app.core;

import org.hybridlb.app.core.view.ControllerCounters;

/**
 * What the controller reports about itself: the error of the last round ({@code lastError}, kept
 * until the next round starts) and its counters. Loop thread only.
 */
final class Status {
    String lastError;
    long reconciles;
    long wavesApplied;
    long rollbacks;
    long failovers;
    long repairs;
    long dipsRemovedDirectly;
    double lastReconcileMillis;

    void error(String message) {
        lastError = message;
    }

    ControllerCounters counters() {
        return new ControllerCounters(reconciles, wavesApplied, rollbacks, failovers, repairs, dipsRemovedDirectly,
                lastReconcileMillis);
    }
}
