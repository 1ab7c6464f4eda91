package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/** One switch of {@code GET /switches} (and the answer of a drain): its state and the VIPs it serves as HMux. */
@JsonPropertyOrder({"id", "role", "pod", "up", "cutOff", "drained", "hmuxUnfit", "vips"})
public final class SwitchView {
    public final String id;
    /** {@code core}, {@code agg} or {@code tor}. */
    public final String role;
    /** Absent for a core switch. */
    public final Integer pod;
    /** False when reported down or cut off from the served part of the fabric. */
    public final boolean up;
    /** Why a live switch counts as down (cut off from the served part), else absent. */
    public final String cutOff;
    public final boolean drained;
    /** Why it cannot be an HMux although meant to, else absent. */
    public final String hmuxUnfit;
    public final List<String> vips;

    @JsonCreator
    public SwitchView(@JsonProperty("id") String id, @JsonProperty("role") String role,
                      @JsonProperty("pod") Integer pod, @JsonProperty("up") boolean up,
                      @JsonProperty("cutOff") String cutOff, @JsonProperty("drained") boolean drained,
                      @JsonProperty("hmuxUnfit") String hmuxUnfit, @JsonProperty("vips") List<String> vips) {
        this.id = id;
        this.role = role;
        this.pod = pod;
        this.up = up;
        this.cutOff = cutOff;
        this.drained = drained;
        this.hmuxUnfit = hmuxUnfit;
        this.vips = Views.list(vips);
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
