package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * {@code GET /stats}: the last measured interval per VIP with its placement, the HMux/SMux split
 * of the traffic, and the controller's counters. {@code interval} is absent before the first
 * measurement.
 */
@JsonPropertyOrder({"interval", "hmuxBytesPerSecond", "smuxBytesPerSecond", "hmuxShare", "vips", "controller"})
public final class StatsView {
    public final Interval interval;
    public final double hmuxBytesPerSecond;
    public final double smuxBytesPerSecond;
    /** HMux bytes over all bytes of installed VIPs (0 without traffic). */
    public final double hmuxShare;
    public final List<VipRate> vips;
    public final ControllerCounters controller;

    @JsonCreator
    public StatsView(@JsonProperty("interval") Interval interval,
                     @JsonProperty("hmuxBytesPerSecond") double hmuxBytesPerSecond,
                     @JsonProperty("smuxBytesPerSecond") double smuxBytesPerSecond,
                     @JsonProperty("hmuxShare") double hmuxShare,
                     @JsonProperty("vips") List<VipRate> vips,
                     @JsonProperty("controller") ControllerCounters controller) {
        this.interval = interval;
        this.hmuxBytesPerSecond = hmuxBytesPerSecond;
        this.smuxBytesPerSecond = smuxBytesPerSecond;
        this.hmuxShare = hmuxShare;
        this.vips = Views.list(vips);
        this.controller = controller;
    }

    /** Which traffic interval the rates are from. */
    @JsonPropertyOrder({"index", "startSeconds", "durationSeconds"})
    public static final class Interval {
        public final int index;
        public final long startSeconds;
        public final long durationSeconds;

        @JsonCreator
        public Interval(@JsonProperty("index") int index, @JsonProperty("startSeconds") long startSeconds,
                        @JsonProperty("durationSeconds") long durationSeconds) {
            this.index = index;
            this.startSeconds = startSeconds;
            this.durationSeconds = durationSeconds;
        }
    }

    /** One VIP's rate and where it is ({@code not installed} for a VIP the controller does not serve). */
    @JsonPropertyOrder({"vip", "bytesPerSecond", "placement"})
    public static final class VipRate {
        public static final String NOT_INSTALLED = "not installed";

        public final String vip;
        public final double bytesPerSecond;
        public final String placement;

        @JsonCreator
        public VipRate(@JsonProperty("vip") String vip, @JsonProperty("bytesPerSecond") double bytesPerSecond,
                       @JsonProperty("placement") String placement) {
            this.vip = vip;
            this.bytesPerSecond = bytesPerSecond;
            this.placement = placement;
        }
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
