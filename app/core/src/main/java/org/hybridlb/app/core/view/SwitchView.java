package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/** One switch of {@code GET /switches} (and the answer of a drain): its state and the VIPs it serves as HMux. */
@JsonPropertyOrder({"id", "role", "pod", "up", "drained", "vips"})
public final class SwitchView {
    public final String id;
    /** {@code core}, {@code agg} or {@code tor}. */
    public final String role;
    /** Absent for a core switch. */
    public final Integer pod;
    public final boolean up;
    public final boolean drained;
    public final List<String> vips;

    @JsonCreator
    public SwitchView(@JsonProperty("id") String id, @JsonProperty("role") String role,
                      @JsonProperty("pod") Integer pod, @JsonProperty("up") boolean up,
                      @JsonProperty("drained") boolean drained, @JsonProperty("vips") List<String> vips) {
        this.id = id;
        this.role = role;
        this.pod = pod;
        this.up = up;
        this.drained = drained;
        this.vips = Views.list(vips);
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
