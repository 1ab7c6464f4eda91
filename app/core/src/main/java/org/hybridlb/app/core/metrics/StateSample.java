package org.hybridlb.app.core.metrics;

import java.util.Map;
import java.util.TreeMap;

/**
 * What the controller's state says at one moment, read on its thread for a scrape: the counters it
 * keeps since it started and the gauges (placement, traffic, devices). Filled on the controller's
 * thread, then handed to {@link ControllerMetrics} (a volatile hand-over) and never changed again.
 */
public final class StateSample {
    /** VIPs per placement: switch id (an HMux) or {@code smux}, with the count (absent: none there). */
    public final Map<String, Integer> vipsByPlacement = new TreeMap<>();
    public int vipsConfigured;
    public int vipsHeldOnSmuxes;
    public boolean migrating;
    public double hmuxBytesPerSecond;
    public double smuxBytesPerSecond;
    public long smuxTableVersion;
    public int smuxes;
    public int smuxesLive;
    public int switches;
    public int switchesDown;
    public int switchesDrained;
    public int dipsUnhealthy;
    /** False while the last write of the state store failed. */
    public boolean stateWritable = true;
    public long wavesApplied;
    public long rollbacks;
    /** VIPs whose routes were withdrawn from a failed HMux. */
    public long failoverVips;
    public long repairs;
    public long dipsRemovedInPlace;
}
