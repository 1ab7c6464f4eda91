package org.hybridlb.solver.model;

/**
 * The limits of a VIP configuration, in one place: the model checks, the controller's REST
 * validation and the JSON schemas ({@code maxItems}, {@code minimum}, {@code maximum}) use these
 * numbers, and tests hold the schemas and the SMux's C limits ({@code smux/src/vip_table.h}) to
 * them. Every VIP is announced on the SMuxes as the backstop, so a configuration has to fit one
 * SMux table.
 */
public final class Limits {
    /** DIPs in one service's pool (its buckets are bounded by {@link #MAX_WCMP_UNITS_PER_SERVICE}). */
    public static final int MAX_DIPS_PER_SERVICE = 4096;
    /**
     * Buckets of one service's pool on the data path ({@link Wcmp}): a WCMP unit each (the
     * weights reduced by their greatest common divisor, weight / gcd per DIP), and one per drained
     * DIP (weight 0), which the SMuxes keep at weight 0 for their pinned connections. The SMux's
     * pool limit (HLB_MAX_DIPS_PER_POOL); an HMux holds the units alone, which the solver counts
     * as ECMP entries (a service with more units than a switch's free ECMP entries never goes to
     * that switch). Weights 1 and 4096 in one pool already make 4097 units.
     */
    public static final int MAX_WCMP_UNITS_PER_SERVICE = 4096;
    /**
     * Services (proto/port) of one VIP. Each one takes a host-table entry on every switch while
     * the VIP is on an HMux (ASSIGNMENT.md), so a VIP with hundreds of ports would eat the
     * fabric-wide budget; a VIP that needs more ports is balanced as a whole ({@code any/0}).
     */
    public static final int MAX_SERVICES_PER_VIP = 64;
    /** Services in a whole configuration: one SMux table (HLB_MAX_SERVICES). */
    public static final int MAX_SERVICES = 65536;
    /** VIPs in a whole configuration (and in one traffic interval): each has at least one service. */
    public static final int MAX_VIPS = MAX_SERVICES;
    /** DIP entries (buckets: WCMP units and drained DIPs), summed over every service, in a whole configuration (HLB_MAX_DIPS). */
    public static final int MAX_DIP_ENTRIES = 1 << 20;
    /** A DIP's WCMP weight: 0 takes no new flows (a drained DIP), up to HLB_MAX_WEIGHT. */
    public static final int MIN_WEIGHT = 0;
    public static final int MAX_WEIGHT = 65535;
    /** The highest port of a tcp or udp service. */
    public static final int MAX_PORT = 65535;
    /** Front ends of one Prism VIP. */
    public static final int MAX_PRISM_FRONTENDS_PER_VIP = 64;
    /** Rules of one Prism VIP (the front end's rules.py MAX_RULES). */
    public static final int MAX_PRISM_RULES = 10000;

    private Limits() {
    }
}
