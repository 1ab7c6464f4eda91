package org.hybridlb.app.core.metrics;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.solver.model.Smux;

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
                ports.stats, ports.health, ports.store);
    }

    private static final class Hmux implements HmuxProgrammer {
        private final HmuxProgrammer inner;
        private final ControllerMetrics m;

        Hmux(HmuxProgrammer inner, ControllerMetrics m) {
            this.inner = inner;
            this.m = m;
        }

        @Override
        public void install(String switchId, VipEntry entry) {
            m.southbound(HMUX, "install", () -> inner.install(switchId, entry));
        }

        @Override
        public void remove(String switchId, String vip) {
            m.southbound(HMUX, "remove", () -> inner.remove(switchId, vip));
        }

        @Override
        public void withdrawRoutes(String switchId, Collection<String> vips) {
            m.southbound(HMUX, "withdraw_routes", () -> inner.withdrawRoutes(switchId, vips));
        }

        @Override
        public void setSmuxGroup(String aggregate, List<Smux> smuxes) {
            m.southbound(HMUX, "set_smux_group", () -> inner.setSmuxGroup(aggregate, smuxes));
        }

        @Override
        public void setSmuxGroups(Map<String, List<Smux>> groups) {
            m.southbound(HMUX, "set_smux_groups", () -> inner.setSmuxGroups(groups));
        }

        @Override
        public Map<String, VipEntry> installedOn(String switchId) {
            return m.southbound(HMUX, "read_switch", () -> inner.installedOn(switchId));
        }

        @Override
        public Map<String, Set<String>> smuxGroups() {
            return m.southbound(HMUX, "read_smux_groups", inner::smuxGroups);
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
        public Map<String, Long> vipBytes(String smuxId) {
            return m.southbound(SMUX, "vip_bytes", () -> inner.vipBytes(smuxId));
        }
    }
}
