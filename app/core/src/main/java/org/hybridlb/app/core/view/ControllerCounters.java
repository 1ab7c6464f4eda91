package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/** What the controller did since it started ({@code controller} in {@code GET /stats}). */
@JsonPropertyOrder({"reconciles", "wavesApplied", "rollbacks", "failovers", "repairs", "dipsRemovedDirectly",
        "lastReconcileMillis"})
public final class ControllerCounters {
    public final long reconciles;
    public final long wavesApplied;
    public final long rollbacks;
    /** VIPs whose routes were withdrawn from a failed HMux. */
    public final long failovers;
    /** Device entries, SMux tables and aggregate groups put right by repair. */
    public final long repairs;
    /** VIPs whose failed or removed DIPs' buckets were removed in place. */
    public final long dipsRemovedDirectly;
    public final double lastReconcileMillis;

    @JsonCreator
    public ControllerCounters(@JsonProperty("reconciles") long reconciles,
                              @JsonProperty("wavesApplied") long wavesApplied,
                              @JsonProperty("rollbacks") long rollbacks,
                              @JsonProperty("failovers") long failovers,
                              @JsonProperty("repairs") long repairs,
                              @JsonProperty("dipsRemovedDirectly") long dipsRemovedDirectly,
                              @JsonProperty("lastReconcileMillis") double lastReconcileMillis) {
        this.reconciles = reconciles;
        this.wavesApplied = wavesApplied;
        this.rollbacks = rollbacks;
        this.failovers = failovers;
        this.repairs = repairs;
        this.dipsRemovedDirectly = dipsRemovedDirectly;
        this.lastReconcileMillis = lastReconcileMillis;
    }
}
