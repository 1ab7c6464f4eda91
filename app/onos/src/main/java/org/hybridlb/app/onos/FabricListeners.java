package org.hybridlb.app.onos;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.hybridlb.app.onos.fabric.FabricTracker;
import org.hybridlb.app.onos.fabric.OnosRouteSource;
import org.hybridlb.solver.model.Host;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.host.HostListener;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkService;
import org.onosproject.routeservice.RouteListener;
import org.onosproject.routeservice.RouteService;

/**
 * The leader's listeners on the fabric: ONOS device, link, host and route events. Each listener
 * only hands its event to the app's thread ({@link EventHandoff}) and returns; there the fabric
 * view is rebuilt, the core is told (switch up or down, live SMuxes, a reconcile) and the paths
 * are refreshed on the path thread.
 */
final class FabricListeners {
    private final EventHandoff handoff;
    private final FabricTracker fabric;
    private final DeviceService devices;
    private final Runnable refreshPaths;
    private final Consumer<String> reconcile;

    private final DeviceListener deviceListener;
    private final LinkListener linkListener;
    private final HostListener hostListener;
    private final RouteListener routeListener;

    FabricListeners(EventHandoff handoff, FabricTracker fabric, DeviceService devices, OnosRouteSource routes,
                    Runnable refreshPaths, Consumer<String> reconcile) {
        this.handoff = handoff;
        this.fabric = fabric;
        this.devices = devices;
        this.refreshPaths = refreshPaths;
        this.reconcile = reconcile;
        deviceListener = e -> handoff.execute("device " + e.type(), () -> deviceEvent(e));
        linkListener = e -> handoff.execute("link " + e.type(), () -> {
            fabric.rebuild();
            handoff.refreshPaths(refreshPaths);
            reconcile.accept("link " + e.type() + " " + e.subject().src() + "-" + e.subject().dst());
        });
        hostListener = e -> handoff.execute("host " + e.type(), () -> {   // DIPs' attachment switches follow hosts
            List<Host> before = fabric.topology().hosts;
            fabric.rebuild();
            if (!sameHosts(before, fabric.topology().hosts)) {
                reconcile.accept("host " + e.type() + " " + e.subject().id());
            }
        });
        routeListener = e -> handoff.execute("route " + e.type(), () -> routes.event(e));
    }

    void register(DeviceService d, LinkService l, HostService h, RouteService r) {
        d.addListener(deviceListener);
        l.addListener(linkListener);
        h.addListener(hostListener);
        r.addListener(routeListener);
    }

    void unregister(DeviceService d, LinkService l, HostService h, RouteService r) {
        r.removeListener(routeListener);
        h.removeListener(hostListener);
        l.removeListener(linkListener);
        d.removeListener(deviceListener);
    }

    private void deviceEvent(DeviceEvent event) {
        DeviceId d = event.subject().id();
        switch (event.type()) {
            case DEVICE_ADDED:
            case DEVICE_UPDATED:
            case DEVICE_AVAILABILITY_CHANGED:
                fabric.rebuild();   // multi-homed hosts hang off an available location; a driver may have changed
                fabric.switchChanged(d, devices.isAvailable(d));
                break;
            case DEVICE_REMOVED:
                fabric.switchChanged(d, false);
                break;
            case PORT_UPDATED:
            case PORT_ADDED:
            case PORT_REMOVED:
                handoff.refreshPaths(refreshPaths);
                reconcile.accept("port change on " + d);
                break;
            default:
                break;
        }
    }

    private static boolean sameHosts(List<Host> a, List<Host> b) {
        Map<String, String> x = new HashMap<>();
        a.forEach(h -> x.put(h.ip, h.tor));
        Map<String, String> y = new HashMap<>();
        b.forEach(h -> y.put(h.ip, h.tor));
        return x.equals(y);
    }
}
