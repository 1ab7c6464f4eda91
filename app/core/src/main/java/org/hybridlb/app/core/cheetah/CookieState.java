package org.hybridlb.app.core.cheetah;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What the controller persists of the Cheetah cookies (part of the state document): each DIP
 * host's server id, the ids in quarantine, each VIP's key, and the SMuxes' stateful owner slots.
 * The keys are secrets: the state file is kept readable by its owner only
 * ({@code FileStateStore}), and no API shows them.
 * A state written before cookies existed has none of this and loads as empty.
 */
public final class CookieState {
    /** Tunnel endpoint (DIP host) -> server id, 1..16383 (COOKIE-SPEC §4). */
    public SortedMap<String, Integer> serverIds = new TreeMap<>();
    /** Server id -> the time (epoch ms) from which it may be given to another host. */
    public SortedMap<Integer, Long> quarantined = new TreeMap<>();
    /** VIP -> its 128-bit key, 32 hex digits (COOKIE-SPEC §8); every VIP has one, cheetah or not. */
    public SortedMap<String, String> keys = new TreeMap<>();
    /**
     * The host agents' default key (their document's top-level {@code key}): for prefixes an agent
     * serves that no VIP names. No mux decodes with it.
     */
    public String hostDefaultKey;
    /**
     * Stateful owner slot (owner id, 0-15, COOKIE-SPEC §7) -> the SMux address holding it: a live
     * SMux (one holding several slots is the value of each), or one lost whose slot is in
     * {@link #ownerQuarantine} ({@link OwnerSlots}).
     */
    public SortedMap<Integer, String> ownerSlots = new TreeMap<>();
    /** Owner slot of a lost SMux -> the time (epoch ms) from which it may be given to another SMux. */
    public SortedMap<Integer, Long> ownerQuarantine = new TreeMap<>();
    /**
     * Owner slot that went from a lost SMux to another SMux as an extra slot -> the lost SMux's
     * address: it takes the slot back if it returns ({@link OwnerSlots}).
     */
    public SortedMap<Integer, String> ownerFormer = new TreeMap<>();
    /**
     * DIPs the operator removed from a cheetah VIP that the SMuxes still decode to, at weight 0,
     * until {@link Retiring#until}: their live connections' cookies stay valid (COOKIE-SPEC §4).
     */
    public List<Retiring> retiring = new ArrayList<>();

    /** One removed DIP of one service of a cheetah VIP, draining. */
    public static final class Retiring {
        public String vip;
        /** The service, {@code proto/port}. */
        public String service;
        public String ip;
        public String hostIp;
        /** Epoch ms at which it leaves the SMuxes' tables. */
        public long until;

        public Retiring() {
        }

        public Retiring(String vip, String service, String ip, String hostIp, long until) {
            this.vip = vip;
            this.service = service;
            this.ip = ip;
            this.hostIp = hostIp;
            this.until = until;
        }
    }
}
