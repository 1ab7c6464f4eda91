package org.hybridlb.app.core;

/** Why the controller reconciles: each source of work has its cause; the text of a {@link Reason} says the rest. */
public enum Cause {
    /** The controller started (state loaded, devices read back). */
    START,
    /** The interval timer. The only round that reads the devices back just every {@code repairInterval}. */
    INTERVAL,
    SWITCH_DOWN,
    SWITCH_UP,
    /** The live SMux set changed (route source). */
    SMUXES_CHANGED,
    /** A DIP failed or recovered its health check. */
    DIP_HEALTH,
    /** The operator's VIP configuration changed (REST, config file, netcfg). */
    CONFIG_CHANGED,
    /** A switch was drained or undrained. */
    DRAIN,
    /** {@code POST /reassign}. */
    REASSIGN_NOW,
    /** A migration that grew a held VIP's pool finished: the VIP may be free to return to an HMux. */
    GROWN_POOL,
    /** Anything else the host saw in the fabric (link or port change, new host, new topology). */
    FABRIC_CHANGED;

    /** Every round but the periodic one reads every device back (waves verify what they touch). */
    boolean alwaysRepairs() {
        return this != INTERVAL;
    }
}
