package org.hybridlb.app.onos.fabric;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.TopologySource;
import org.hybridlb.app.onos.HybridlbConfig;
import org.hybridlb.solver.model.Topology;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fabric as ONOS reports it, for the core: the {@link FabricView} snapshot, rebuilt from the
 * app's netcfg and ONOS's device, link and host services whenever they change, and the core's
 * {@link TopologySource} over it (topology, unavailable switches, switches that cannot be HMuxes
 * and why, the core's event sink). A device found unfit to be an HMux ({@link HmuxCapability}) is
 * logged once when found, with the fix, and once when fixed.
 */
public final class FabricTracker implements TopologySource {
    private static final Logger log = LoggerFactory.getLogger(FabricTracker.class);

    private final Supplier<HybridlbConfig> config;
    private final DeviceService devices;
    private final LinkService links;
    private final HostService hosts;
    private final HmuxCapability capability;
    private final Object lock = new Object();
    private volatile FabricView view = FabricView.EMPTY;
    private volatile EventSink sink;

    public FabricTracker(Supplier<HybridlbConfig> config, DeviceService devices, LinkService links, HostService hosts,
                         HmuxCapability capability) {
        this.config = config;
        this.devices = devices;
        this.links = links;
        this.hosts = hosts;
        this.capability = capability;
    }

    /** The current snapshot. */
    public FabricView view() {
        return view;
    }

    /** Rebuilds the snapshot from the configuration and ONOS's services now. */
    public FabricView rebuild() {
        synchronized (lock) {   // each build starts from the last (hosts ONOS forgot stay where they were)
            FabricView before = view;
            view = FabricBuilder.build(config.get(), devices, links, hosts, before, capability);
            logUnfitChanges(before.unfitForHmux(), view.unfitForHmux());
            return view;
        }
    }

    /** Puts an earlier snapshot back (a configuration that was refused after the rebuild). */
    public void restore(FabricView earlier) {
        synchronized (lock) {
            view = earlier;
        }
    }

    private static void logUnfitChanges(Map<String, String> before, Map<String, String> now) {
        now.forEach((sw, why) -> {
            if (!why.equals(before.get(sw))) {
                log.warn("hybridlb: switch {}: {}", sw, why);
            }
        });
        before.keySet().stream().filter(sw -> !now.containsKey(sw))
                .forEach(sw -> log.info("hybridlb: switch {} can be an HMux now", sw));
    }

    /** Tells the core that fabric device {@code device} went up or down (nothing for other devices). */
    public void switchChanged(DeviceId device, boolean up) {
        EventSink s = sink;
        view.byDevice(device).ifPresent(spec -> {
            if (s == null) {
                return;
            }
            if (up) {
                s.switchUp(spec.sw.id);
            } else {
                s.switchDown(spec.sw.id);
            }
        });
    }

    /** The core's event sink, once the controller subscribed (else null). */
    public EventSink sink() {
        return sink;
    }

    @Override
    public Topology topology() {
        return view.topology();
    }

    @Override
    public Set<String> downSwitches() {
        Set<String> down = new TreeSet<>();
        for (FabricView.SwitchSpec s : view.switches().values()) {
            if (!devices.isAvailable(s.device)) {
                down.add(s.sw.id);
            }
        }
        return down;
    }

    @Override
    public Map<String, String> unfitForHmux() {
        return view.unfitForHmux();
    }

    @Override
    public void subscribe(EventSink s) {
        sink = s;
    }
}
