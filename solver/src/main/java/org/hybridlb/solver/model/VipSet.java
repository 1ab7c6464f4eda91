package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** The VIP configuration file: {@code {"vips": [...]}}. */
public final class VipSet {
    public final List<Vip> vips;

    @JsonCreator
    public VipSet(@JsonProperty("vips") List<Vip> vips) {
        this.vips = List.copyOf(vips);
    }
}
