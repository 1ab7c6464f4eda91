package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/** One SMux of {@code GET /smuxes}: where it is, whether it announces the aggregates, what it runs. */
@JsonPropertyOrder({"id", "ip", "tor", "capacityBps", "live", "tableVersion", "vips"})
public final class SmuxView {
    public final String id;
    public final String ip;
    public final String tor;
    public final double capacityBps;
    /** It announces the aggregates to the route server now. */
    public final boolean live;
    /** The VIP table version the controller last published. */
    public final long tableVersion;
    /** VIPs in that table. */
    public final int vips;

    @JsonCreator
    public SmuxView(@JsonProperty("id") String id, @JsonProperty("ip") String ip, @JsonProperty("tor") String tor,
                    @JsonProperty("capacityBps") double capacityBps, @JsonProperty("live") boolean live,
                    @JsonProperty("tableVersion") long tableVersion, @JsonProperty("vips") int vips) {
        this.id = id;
        this.ip = ip;
        this.tor = tor;
        this.capacityBps = capacityBps;
        this.live = live;
        this.tableVersion = tableVersion;
        this.vips = vips;
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
