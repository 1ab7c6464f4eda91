package org.hybridlb.app.core.port;

import java.util.Objects;
import java.util.Set;

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

    public Ports(TopologySource topology, HmuxProgrammer hmux, SmuxControl smux, RouteSource routes,
                 StatsSource stats, HealthSource health, StateStore store) {
        this(topology, hmux, smux, routes, stats, health, store, null);
    }

    public Ports(TopologySource topology, HmuxProgrammer hmux, SmuxControl smux, RouteSource routes,
                 StatsSource stats, HealthSource health, StateStore store, HostCookieControl cookies) {
        this.topology = Objects.requireNonNull(topology, "topology");
        this.hmux = Objects.requireNonNull(hmux, "hmux");
        this.smux = Objects.requireNonNull(smux, "smux");
        this.routes = Objects.requireNonNull(routes, "routes");
        this.stats = stats != null ? stats : () -> null;
        this.health = health != null ? health : Set::of;
        this.store = Objects.requireNonNull(store, "store");
        this.cookies = cookies != null ? cookies : HostCookieControl.NONE;
    }
}
