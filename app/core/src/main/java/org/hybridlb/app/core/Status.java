package org.hybridlb.app.core;

import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.view.ControllerCounters;

/**
 * What the controller reports about itself: the error of the last round ({@code lastError}, kept
 * until the next round starts), its counters, and the metrics its events are observed in. Loop
 * thread only (the metrics are thread-safe).
 */
final class Status {
    final ControllerMetrics metrics;
    String lastError;
    long reconciles;
    long wavesApplied;
    long rollbacks;
    long failovers;
    long repairs;
    long dipsRemovedDirectly;
    double lastReconcileMillis;

    Status(ControllerMetrics metrics) {
        this.metrics = metrics;
    }

    void error(String message) {
        lastError = message;
    }

    ControllerCounters counters() {
        return new ControllerCounters(reconciles, wavesApplied, rollbacks, failovers, repairs, dipsRemovedDirectly,
                lastReconcileMillis);
    }
}
