package org.hybridlb.app.onos.fabric;

import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.RouteSource;
import org.hybridlb.solver.model.Smux;
import org.onosproject.routeservice.ResolvedRoute;
import org.onosproject.routeservice.RouteEvent;
import org.onosproject.routeservice.RouteInfo;
import org.onosproject.routeservice.RouteListener;
import org.onosproject.routeservice.RouteService;
import org.onosproject.routeservice.RouteTableId;

/**
 * The live SMux set from ONOS's RouteService: an SMux is live while the route service holds an IPv4
 * route with the SMux as next hop. SMux hosts announce only their VIP aggregates (FRR on the SMux
 * host, brought into ONOS by FPM or BGP) and withdraw them when the SMux is unhealthy. (Matching
 * the prefixes against the VIP aggregates would need the VIP set, which lives on the controller's
 * thread that calls this source.)
 */
public final class OnosRouteSource implements RouteSource, RouteListener {
    private static final RouteTableId IPV4 = new RouteTableId("ipv4");

    private final RouteService routes;
    private final Supplier<FabricView> fabric;
    private volatile EventSink sink;
    private volatile Set<String> last = Set.of();

    public OnosRouteSource(RouteService routes, Supplier<FabricView> fabric) {
        this.routes = routes;
        this.fabric = fabric;
    }

    @Override
    public Set<String> liveSmuxes() {
        Set<String> nextHops = new TreeSet<>();
        for (RouteInfo info : routes.getRoutes(IPV4)) {
            for (ResolvedRoute r : info.allRoutes()) {
                nextHops.add(r.nextHop().toString());
            }
        }
        Set<String> live = new TreeSet<>();
        for (Smux s : fabric.get().smuxes().values()) {
            if (nextHops.contains(s.ip)) {
                live.add(s.id);
            }
        }
        last = live;
        return live;
    }

    @Override
    public void subscribe(EventSink sink) {
        this.sink = sink;
    }

    @Override
    public void event(RouteEvent event) {
        EventSink s = sink;
        if (s == null) {
            return;
        }
        Set<String> before = last;
        Set<String> now = liveSmuxes();
        if (!now.equals(before)) {
            s.smuxesChanged(now);
        }
    }
}
