package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;

/**
 * One snapshot of the fabric as hybridlb sees it: the core's {@link Topology} plus the mapping
 * between the core's switch ids and ONOS devices and each HMux-capable switch's tunnel port.
 * Immutable; {@link FabricBuilder} makes a new one from config and the ONOS services.
 */
public final class FabricView {
    /** Switch spec of one device: the core's switch and the port of its flow-based GRE tunnel. */
    public static final class SwitchSpec {
        public final DeviceId device;
        public final Switch sw;
        /** Null when the device has no tunnel port: it cannot be an HMux (tunnel table 0). */
        public final PortNumber tunnelPort;
        /**
         * Why a device with a tunnel port still cannot be an HMux ({@link HmuxCapability}), then its
         * tunnel table is 0; null when it can.
         */
        public final String hmuxUnfit;

        public SwitchSpec(DeviceId device, Switch sw, PortNumber tunnelPort) {
            this(device, sw, tunnelPort, null);
        }

        public SwitchSpec(DeviceId device, Switch sw, PortNumber tunnelPort, String hmuxUnfit) {
            this.device = device;
            this.sw = sw;
            this.tunnelPort = tunnelPort;
            this.hmuxUnfit = hmuxUnfit;
        }
    }

    public static final FabricView EMPTY = new FabricView(List.of(), List.of(), List.of(), List.of());

    private final Map<String, SwitchSpec> bySwitch = new LinkedHashMap<>();
    private final Map<DeviceId, SwitchSpec> byDevice = new LinkedHashMap<>();
    private final Map<String, Smux> smuxes = new TreeMap<>();
    private final Topology topology;

    public FabricView(List<SwitchSpec> switches, List<Link> links, List<Host> hosts, List<Smux> smuxList) {
        List<Switch> sws = new ArrayList<>();
        for (SwitchSpec s : switches) {
            bySwitch.put(s.sw.id, s);
            byDevice.put(s.device, s);
            sws.add(s.sw);
        }
        for (Smux s : smuxList) {
            smuxes.put(s.id, s);
        }
        this.topology = new Topology("onos", sws, links, hosts, smuxList);
    }

    public Topology topology() {
        return topology;
    }

    public Optional<SwitchSpec> bySwitch(String switchId) {
        return Optional.ofNullable(bySwitch.get(switchId));
    }

    public Optional<SwitchSpec> byDevice(DeviceId device) {
        return Optional.ofNullable(byDevice.get(device));
    }

    public Map<String, SwitchSpec> switches() {
        return Collections.unmodifiableMap(bySwitch);
    }

    public Map<String, Smux> smuxes() {
        return Collections.unmodifiableMap(smuxes);
    }

    /** Switches meant to be HMuxes (with a tunnel port) whose device cannot be one, with why. */
    public Map<String, String> unfitForHmux() {
        Map<String, String> out = new TreeMap<>();
        for (SwitchSpec s : bySwitch.values()) {
            if (s.hmuxUnfit != null) {
                out.put(s.sw.id, s.hmuxUnfit);
            }
        }
        return out;
    }
}
