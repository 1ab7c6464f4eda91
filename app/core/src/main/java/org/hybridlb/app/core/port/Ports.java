package org.hybridlb.app.core.port;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import org.hybridlb.app.core.prism.FabricPins;
import org.hybridlb.app.core.prism.HttpPrismFrontEnds;
import org.hybridlb.app.core.prism.PrismFrontEnds;
import org.hybridlb.app.core.tls.TlsFiles;

/** The southbound ports a controller is built with; the host runtime provides them. */
public final class Ports {
    public final TopologySource topology;
    public final HmuxProgrammer hmux;
    public final SmuxControl smux;
    public final RouteSource routes;
    public final StatsSource stats;
    public final HealthSource health;
    public final StateStore store;
    /** The host agents' Cheetah cookie configuration; {@link HostCookieControl#NONE} without agents. */
    public final HostCookieControl cookies;
    /** The Prism front ends' admin APIs; without one, plain HTTP (a front end's admin on its host's loopback). */
    public final PrismFrontEnds prism;
    /** Where Prism fabric steering pins go; {@link FabricPins#NONE} when nothing renders them. */
    public final FabricPins pins;

    public Ports(TopologySource topology, HmuxProgrammer hmux, SmuxControl smux, RouteSource routes,
                 StatsSource stats, HealthSource health, StateStore store) {
        this(topology, hmux, smux, routes, stats, health, store, null);
    }

    public Ports(TopologySource topology, HmuxProgrammer hmux, SmuxControl smux, RouteSource routes,
                 StatsSource stats, HealthSource health, StateStore store, HostCookieControl cookies) {
        this(topology, hmux, smux, routes, stats, health, store, cookies, null);
    }

    public Ports(TopologySource topology, HmuxProgrammer hmux, SmuxControl smux, RouteSource routes,
                 StatsSource stats, HealthSource health, StateStore store, HostCookieControl cookies,
                 PrismFrontEnds prism) {
        this(topology, hmux, smux, routes, stats, health, store, cookies, prism, null);
    }

    public Ports(TopologySource topology, HmuxProgrammer hmux, SmuxControl smux, RouteSource routes,
                 StatsSource stats, HealthSource health, StateStore store, HostCookieControl cookies,
                 PrismFrontEnds prism, FabricPins pins) {
        this.topology = Objects.requireNonNull(topology, "topology");
        this.hmux = Objects.requireNonNull(hmux, "hmux");
        this.smux = Objects.requireNonNull(smux, "smux");
        this.routes = Objects.requireNonNull(routes, "routes");
        this.stats = stats != null ? stats : () -> null;
        this.health = health != null ? health : Set::of;
        this.store = Objects.requireNonNull(store, "store");
        this.cookies = cookies != null ? cookies : HostCookieControl.NONE;
        this.prism = prism != null ? prism : new HttpPrismFrontEnds(Duration.ofSeconds(5), PlainClient::get);
        this.pins = pins != null ? pins : FabricPins.NONE;
    }

    /** One plain HTTP client, made when first used. */
    private static final class PlainClient {
        private static final HttpClient CLIENT = TlsFiles.client(null, Duration.ofSeconds(5));

        static HttpClient get() {
            return CLIENT;
        }
    }
}
