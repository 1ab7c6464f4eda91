package org.hybridlb.app.onos;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.hybridlb.app.onos.fabric.P4Devices;
import org.hybridlb.app.onos.p4.HlbPipeconfs;
import org.onosproject.net.DeviceId;
import org.onosproject.net.pi.service.PiPipeconfService;

/**
 * The P4 devices of the fabric as ONOS knows them: a device is one when ONOS has bound one of the
 * hybridlb pipeconfs to it ({@link PiPipeconfService#ofDevice}: the pipeconf its netcfg names, which
 * ONOS's P4Runtime driver pushed); the next ids towards each switch come from the netcfg's
 * {@code nextId}. Without a pipeconf service (an ONOS without P4) no device is.
 */
final class PipeconfDevices implements P4Devices {
    private final Supplier<PiPipeconfService> pipeconfs;
    private final Supplier<HybridlbConfig> config;

    PipeconfDevices(Supplier<PiPipeconfService> pipeconfs, Supplier<HybridlbConfig> config) {
        this.pipeconfs = pipeconfs;
        this.config = config;
    }

    @Override
    public Optional<String> profile(DeviceId device) {
        PiPipeconfService s = pipeconfs.get();
        return s == null ? Optional.empty() : s.ofDevice(device).flatMap(HlbPipeconfs::profileOf);
    }

    @Override
    public Map<String, Integer> nextIds() {
        Map<String, Integer> out = new TreeMap<>();
        HybridlbConfig c = config.get();
        if (c != null) {
            c.switches().stream().filter(s -> s.nextId != null).forEach(s -> out.put(s.id, s.nextId));
        }
        return out;
    }
}
