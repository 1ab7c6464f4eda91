package org.hybridlb.app.core.port;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.solver.model.Smux;

/**
 * Programs the fabric switches: the HMux entry of a VIP (match VIP[,port] -> hash select group
 * whose buckets encapsulate to the DIPs, bucket ids as given), the {@code VIP/32} routes towards
 * the HMux on the other switches, and the aggregate route to the live SMuxes at lower priority.
 * Each call is atomic per switch (the daemon uses {@code ovs-ofctl --bundle}; ONOS a flow-rule
 * batch). Implementations must be idempotent: installing what is already there changes nothing.
 */
public interface HmuxProgrammer {
    /**
     * Installs or replaces {@code entry} on {@code switchId} and points {@code VIP/32} at it on the
     * other switches (replacing a route to another HMux: make-before-break).
     */
    void install(String switchId, VipEntry entry);

    /** Withdraws {@code VIP/32} where it points at {@code switchId}, then removes the entry there. */
    void remove(String switchId, String vip);

    /**
     * {@code switchId} has failed: withdraw the {@code VIP/32} routes of {@code vips} towards it on
     * every other switch at once, so the aggregate (the SMuxes) takes their traffic. The failed
     * switch itself is not touched.
     */
    void withdrawRoutes(String switchId, Collection<String> vips);

    /** Routes {@code aggregate} to a select group over {@code smuxes} (empty: remove the route). */
    void setSmuxGroup(String aggregate, List<Smux> smuxes);

    /**
     * {@link #setSmuxGroup} for each aggregate of {@code groups}, sent together where the devices
     * allow it (a lost SMux leaves every group in one change per switch).
     */
    default void setSmuxGroups(Map<String, List<Smux>> groups) {
        groups.forEach(this::setSmuxGroup);
    }

    /** The VIP entries installed on {@code switchId} right now, by VIP. */
    Map<String, VipEntry> installedOn(String switchId);

    /** The aggregates routed to SMuxes right now, with the SMux ids of each group. */
    Map<String, Set<String>> smuxGroups();
}
