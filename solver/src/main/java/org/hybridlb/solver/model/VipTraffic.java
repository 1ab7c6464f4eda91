package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One VIP's traffic in one interval, in bytes per second.
 * {@code sources}: node id (a ToR or host id, or {@link #INTERNET} for traffic entering through
 * the core layer) to rate. {@code dips}: DIP ip to rate; when empty the VIP's traffic is split
 * over its DIPs by weight.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public final class VipTraffic {
    /** Source key for traffic from outside the data center; it enters evenly over the cores. */
    public static final String INTERNET = "internet";

    public final String vip;
    public final Map<String, Double> sources;
    public final Map<String, Double> dips;

    @JsonCreator
    public VipTraffic(@JsonProperty("vip") String vip,
                      @JsonProperty("sources") Map<String, Double> sources,
                      @JsonProperty("dips") Map<String, Double> dips) {
        this.vip = vip;
        this.sources = Collections.unmodifiableMap(new LinkedHashMap<>(sources));
        this.dips = dips == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(dips));
    }

    /** Total rate of the VIP: the sum over its sources. */
    @JsonIgnore
    public double totalBps() {
        double sum = 0;
        for (double v : sources.values()) {
            sum += v;
        }
        return sum;
    }
}
