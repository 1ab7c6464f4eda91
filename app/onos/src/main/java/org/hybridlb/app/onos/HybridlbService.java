package org.hybridlb.app.onos;

import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.metrics.ControllerMetrics;

/** The hybridlb controller inside ONOS, for the CLI and REST. */
public interface HybridlbService {
    /** The core's northbound API (the same calls as hybridlbd's REST). */
    HybridlbApi api();

    /**
     * The app's controller metrics (Prometheus), for the component's lifetime: on the leader those
     * of its running controller; on the other instances no controller state (no
     * {@code hybridlb_controller_active}), only the counters of the time they led.
     */
    ControllerMetrics metrics();

    /** Fabric switch ids known now (config or device annotations). */
    Set<String> switchIds();

    /** Configured SMux ids. */
    Set<String> smuxIds();

    /**
     * Fabric switches meant to be HMuxes whose ONOS device cannot be one (its driver lacks the
     * Nicira set-tunnel-destination extension), with the reason and the netcfg that fixes it.
     */
    Map<String, String> unfitForHmux();

    /** Why the last network configuration was refused, or null when it was applied. */
    String lastConfigError();
}
