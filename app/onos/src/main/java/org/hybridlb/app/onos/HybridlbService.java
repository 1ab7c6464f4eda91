package org.hybridlb.app.onos;

import java.util.Set;
import org.hybridlb.app.core.HybridlbApi;

/** The hybridlb controller inside ONOS, for the CLI and REST. */
public interface HybridlbService {
    /** The core's northbound API (the same calls as hybridlbd's REST). */
    HybridlbApi api();

    /** Fabric switch ids known now (config or device annotations). */
    Set<String> switchIds();

    /** Configured SMux ids. */
    Set<String> smuxIds();

    /** Why the last network configuration was refused, or null when it was applied. */
    String lastConfigError();
}
