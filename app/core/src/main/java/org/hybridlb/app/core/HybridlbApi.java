package org.hybridlb.app.core;

import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Vip;

/**
 * What the northbound (REST resources, ONOS CLI, daemon CLI) may ask of the controller. Every
 * call runs on the controller thread and waits; refusals are {@link ApiException}s and change
 * nothing. Bodies are JSON text so that validation can name the field in the caller's document.
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

    Map<String, Object> assignment();

    Map<String, Object> migrations();

    List<Map<String, Object>> smuxes();

    Map<String, Object> stats();

    Map<String, Object> reassignNow();

    /** Every switch: id, role, pod, {@code up}, {@code drained} and the VIPs it serves as HMux. */
    default List<Map<String, Object>> switches() {
        throw new ApiException(501, "not implemented", null, "switches are not listed here");
    }

    /**
     * Drains {@code switchId} (maintenance): its VIPs migrate away through the SMuxes (Duet §3.4.2,
     * no packet lost) and no VIP lands on it until undrained. Persisted; returns the switch.
     */
    default Map<String, Object> setDrained(String switchId, boolean drained) {
        throw new ApiException(501, "not implemented", null, "switches cannot be drained here");
    }
}
