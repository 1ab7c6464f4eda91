package org.hybridlb.app.core.port;

import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.model.SmuxPin;
import org.hybridlb.app.core.model.SmuxTable;

/**
 * The SMux control API (smux/src/control.c): {@code PUT /table} replaces the whole versioned VIP
 * table atomically, {@code GET /table} returns the running one; its counters and pinned connections
 * are read for the traffic matrix and for pool-growth holds.
 */
public interface SmuxControl {
    /** Sends {@code table}; throws when the SMux refuses it (400 invalid, 409 stale version) or is unreachable. */
    void putTable(String smuxId, SmuxTable table);

    /**
     * The base URL ({@code http(s)://HOST:PORT}) of {@code smuxId}'s control API, which the host
     * agents send their Cheetah close and load reports to; null when unknown (no reports to it).
     */
    default String controlUrl(String smuxId) {
        return null;
    }

    /** The running table of {@code smuxId}. */
    SmuxTable getTable(String smuxId);

    /**
     * Per VIP: live pinned connections of {@code smuxId} that a stateless mux hashing like it (an
     * HMux) would send to another DIP ({@code GET /connections/diverging}). A VIP whose pool grew
     * returns to an HMux only when this is 0 on every live SMux (Duet §3.5.2).
     */
    default Map<String, Long> divergingConnections(String smuxId) {
        throw new SouthboundException("SMux " + smuxId + ": this SMux client cannot count diverging connections");
    }

    /**
     * Per VIP: IP bytes {@code smuxId} forwarded since each of its services' entries appeared (a
     * counter: it only grows, and starts again from 0 when the VIP leaves the table and comes back;
     * {@code GET /stats}). The traffic matrix is built from these.
     */
    default Map<String, Long> vipBytes(String smuxId) {
        throw new SouthboundException("SMux " + smuxId + ": this SMux client cannot read counters");
    }

    /**
     * Puts a flow pin on {@code smuxId} ({@code POST /pins}), replacing the flow's pin if it has one;
     * returns once the SMux's workers send the flow by it. Throws when the SMux refuses it (400, 507
     * full) or does not answer.
     */
    default void putPin(String smuxId, SmuxPin pin) {
        throw new SouthboundException("SMux " + smuxId + ": this SMux client cannot pin flows");
    }

    /** Removes the pin of {@code flow}'s flow from {@code smuxId} ({@code DELETE /pins}); nothing when it has none. */
    default void removePin(String smuxId, SmuxPin flow) {
        throw new SouthboundException("SMux " + smuxId + ": this SMux client cannot pin flows");
    }

    /** The flow pins {@code smuxId} holds ({@code GET /pins}). */
    default List<SmuxPin> pins(String smuxId) {
        throw new SouthboundException("SMux " + smuxId + ": this SMux client cannot pin flows");
    }
}
