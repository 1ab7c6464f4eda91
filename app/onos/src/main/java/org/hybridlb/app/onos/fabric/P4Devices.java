package org.hybridlb.app.onos.fabric;

import java.util.Map;
import java.util.Optional;
import org.onosproject.net.DeviceId;

/**
 * Which devices run a hybridlb P4 program, and the fabric's next ids towards each switch on them
 * (the {@code routing_v4 → set_next_id} a VIP route takes: the fabric's routing programs the next
 * hops, the app only points VIP routes at them).
 */
public interface P4Devices {
    /** No P4 device (an OpenFlow-only ONOS). */
    P4Devices NONE = new P4Devices() {
        @Override
        public Optional<String> profile(DeviceId device) {
            return Optional.empty();
        }

        @Override
        public Map<String, Integer> nextIds() {
            return Map.of();
        }
    };

    /** The hybridlb profile the device's pipeconf is, or empty when it runs none of them. */
    Optional<String> profile(DeviceId device);

    /** Switch id → the next id towards it on the P4 devices. */
    Map<String, Integer> nextIds();
}
