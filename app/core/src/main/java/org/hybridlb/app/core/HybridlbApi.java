package org.hybridlb.app.core;

import java.util.List;
import org.hybridlb.app.core.prism.PrismConnectionView;
import org.hybridlb.app.core.prism.PrismVipView;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.MigrationsView;
import org.hybridlb.app.core.view.ReassignResult;
import org.hybridlb.app.core.view.SmuxView;
import org.hybridlb.app.core.view.StatsView;
import org.hybridlb.app.core.view.SwitchView;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;

/**
 * What the northbound (REST resources, ONOS CLI, daemon CLI) may ask of the controller. Every
 * call runs on the controller thread and waits; refusals are {@link ApiException}s and change
 * nothing. Bodies are JSON text so that validation can name the field in the caller's document;
 * answers are the immutable views of {@code org.hybridlb.app.core.view}.
 */
public interface HybridlbApi {
    List<Vip> vips();

    Vip vip(String vip);

    /** Replaces the whole configuration with {@code {"vips": [...]}} (config files, ONOS netcfg). */
    List<Vip> replaceVips(String body);

    Vip createVip(String body);

    Vip replaceVip(String vip, String body);

    void deleteVip(String vip);

    /** Body: {@code {"ip", "weight"?, "hostIp"?, "proto"?, "port"?}}. */
    Vip addDip(String vip, String body);

    /** {@code proto}/{@code port} null: the DIP leaves every service of the VIP. */
    Vip removeDip(String vip, String dip, String proto, Integer port);

    AssignmentView assignment();

    MigrationsView migrations();

    List<SmuxView> smuxes();

    StatsView stats();

    ReassignResult reassignNow();

    /** The fabric as the controller sees it: switches, links, hosts and SMuxes (the shared topology schema). */
    Topology topology();

    /** Every switch: id, role, pod, {@code up}, {@code drained} and the VIPs it serves as HMux. */
    List<SwitchView> switches();

    /**
     * Drains {@code switchId} (maintenance): its VIPs migrate away through the SMuxes (Duet §3.4.2,
     * no packet lost) and no VIP lands on it until undrained. Persisted; returns the switch.
     */
    SwitchView setDrained(String switchId, boolean drained);

    /** Each Prism VIP: its front ends (rules in force, hand-off counters) and backends (health, load). */
    default List<PrismVipView> prismVips() {
        throw ApiException.unavailable("this controller has no Prism hand-off controller");
    }

    /**
     * A Prism VIP (its front ends {@code pending} until the hand-off controller has asked them); 404
     * when {@code vip} is no Prism VIP.
     */
    default PrismVipView prismVip(String vip) {
        throw ApiException.unavailable("this controller has no Prism hand-off controller");
    }

    /** The fabric steering pins of a Prism VIP; 404 when {@code vip} is no Prism VIP. */
    default List<org.hybridlb.app.core.prism.PrismPin> prismPins(String vip) {
        throw ApiException.unavailable("this controller has no Prism hand-off controller");
    }

    /**
     * Installs a fabric steering pin on a Prism VIP with {@code steering: fabric} and returns it once
     * the fabric acknowledged it ({@code {client, clientPort, vipPort, backend}}; 400 naming the field,
     * 404 no such Prism VIP, 409 the VIP is agent-steered, 503 not acknowledged: nothing kept).
     */
    default org.hybridlb.app.core.prism.PrismPin prismPin(String vip, String body) {
        throw ApiException.unavailable("this controller has no Prism hand-off controller");
    }

    /** Removes the pin of a flow once the fabric acknowledged it; false when there was none. */
    default boolean prismUnpin(String vip, String client, int clientPort, int vipPort) {
        throw ApiException.unavailable("this controller has no Prism hand-off controller");
    }

    /** The connections of a Prism VIP and who owns each now (none until asked); 404 when {@code vip} is no Prism VIP. */
    default List<PrismConnectionView> prismConnections(String vip) {
        throw ApiException.unavailable("this controller has no Prism hand-off controller");
    }
}
