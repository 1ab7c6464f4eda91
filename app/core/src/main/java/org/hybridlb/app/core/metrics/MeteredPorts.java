package org.hybridlb.app.core.metrics;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.model.SmuxPin;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.SmuxControl;

/**
 * The host's ports with every HMux and SMux call timed and its failures counted
 * ({@code hybridlb_southbound_*}): the controller talks to these, the southbounds stay as they are.
 */
public final class MeteredPorts {
    public static final String HMUX = "hmux";
    public static final String SMUX = "smux";

    private MeteredPorts() {
    }

    /** {@code ports} with its HMux programmer and SMux client timed by {@code metrics}. */
    public static Ports wrap(Ports ports, ControllerMetrics metrics) {
        return new Ports(ports.topology, new Hmux(ports.hmux, metrics), new Smuxes(ports.smux, metrics), ports.routes,
                ports.stats, ports.health, ports.store, ports.cookies, ports.prism, ports.pins);
    }

    private static final class Hmux implements HmuxProgrammer {
        private final HmuxProgrammer inner;
        private final ControllerMetrics m;

        Hmux(HmuxProgrammer inner, ControllerMetrics m) {
            this.inner = inner;
            this.m = m;
        }

        @Override
        public SwitchCapability capability(String switchId) {
            return inner.capability(switchId);     // what the southbound knows, no device call
        }

        @Override
        public Map<String, SwitchReading> read(Collection<String> switchIds) {
            return m.southbound(HMUX, "read", () -> inner.read(switchIds));
        }

        @Override
        public void apply(Map<String, SwitchDelta> deltas) {
            m.southbound(HMUX, "apply", () -> inner.apply(deltas));
        }
    }

    private static final class Smuxes implements SmuxControl {
        private final SmuxControl inner;
        private final ControllerMetrics m;

        Smuxes(SmuxControl inner, ControllerMetrics m) {
            this.inner = inner;
            this.m = m;
        }

        @Override
        public void putTable(String smuxId, SmuxTable table) {
            m.southbound(SMUX, "put_table", () -> inner.putTable(smuxId, table));
        }

        @Override
        public SmuxTable getTable(String smuxId) {
            return m.southbound(SMUX, "get_table", () -> inner.getTable(smuxId));
        }

        @Override
        public Map<String, Long> divergingConnections(String smuxId) {
            return m.southbound(SMUX, "diverging_connections", () -> inner.divergingConnections(smuxId));
        }

        @Override
        public String controlUrl(String smuxId) {
            return inner.controlUrl(smuxId);
        }

        @Override
        public void putPin(String smuxId, SmuxPin pin) {
            m.southbound(SMUX, "put_pin", () -> inner.putPin(smuxId, pin));
        }

        @Override
        public void removePin(String smuxId, SmuxPin flow) {
            m.southbound(SMUX, "remove_pin", () -> inner.removePin(smuxId, flow));
        }

        @Override
        public List<SmuxPin> pins(String smuxId) {
            return m.southbound(SMUX, "get_pins", () -> inner.pins(smuxId));
        }

        @Override
        public Map<String, Long> vipBytes(String smuxId) {
            return m.southbound(SMUX, "vip_bytes", () -> inner.vipBytes(smuxId));
        }
    }
}
