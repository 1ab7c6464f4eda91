package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Vip;

/**
 * Everything the controller persists (one JSON document in the {@code StateStore}): the
 * operator's VIP configuration, the stable bucket ids, what is installed on the data path
 * (configuration on the SMuxes and placement on HMuxes) as of the last verified wave, the SMux
 * table version and the migration in flight. Mutable; only the controller thread touches it.
 */
public final class ControllerState {
    public int format = 1;
    public long smuxTableVersion;
    /** The operator's VIPs, in creation order. */
    public List<Vip> desired = new ArrayList<>();
    /**
     * Bucket id of every WCMP unit ({@code "vip|proto/port|dip"} for a DIP's first unit or its
     * drained bucket, {@code "vip|proto/port|dip#k"} for unit k), stable while it stays in the pool.
     */
    public Map<String, Integer> bucketIds = new LinkedHashMap<>();
    /**
     * Configuration installed on the SMuxes (every installed VIP is on the SMuxes: the backstop),
     * its weights in WCMP units (reduced by their gcd, {@code Wcmp.reduced}).
     */
    public Map<String, Vip> installedVips = new LinkedHashMap<>();
    /** HMux switches each installed VIP is announced on (two only during make-before-break). */
    public Map<String, List<String>> hmuxes = new LinkedHashMap<>();
    /**
     * VIP -> since when (epoch ms) it is kept on the SMuxes because its pool grew: an HMux would
     * send some of its pinned connections to another DIP (Duet §3.5.2).
     */
    public Map<String, Long> heldOnSmuxes = new LinkedHashMap<>();
    /**
     * VIP on the SMuxes -> the hash contract they follow for it since it left an HMux (that HMux's),
     * and its move to an HMux whose contract differs, held on the SMuxes ({@link ContractMove}).
     */
    public Map<String, ContractMove> smuxContracts = new LinkedHashMap<>();
    /** Switches drained by the operator: their VIPs migrate away and none lands on them. */
    public java.util.SortedSet<String> drained = new java.util.TreeSet<>();
    /** Cheetah server ids and keys (secrets: the state file is its owner's only). */
    public org.hybridlb.app.core.cheetah.CookieState cookies = new org.hybridlb.app.core.cheetah.CookieState();
    /** The last migration, or the one in flight. */
    public MigrationRecord migration;

    public String placement(String vip) {
        List<String> at = hmuxes.get(vip);
        return at == null || at.isEmpty() ? org.hybridlb.solver.model.Assignment.SMUX : at.get(0);
    }
}
