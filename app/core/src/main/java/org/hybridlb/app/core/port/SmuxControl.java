package org.hybridlb.app.core.port;

import org.hybridlb.app.core.model.SmuxTable;

/**
 * The SMux control API (smux/src/control.c): {@code PUT /table} replaces the whole versioned VIP
 * table atomically, {@code GET /table} returns the running one.
 */
public interface SmuxControl {
    /** Sends {@code table}; throws when the SMux refuses it (400 invalid, 409 stale version) or is unreachable. */
    void putTable(String smuxId, SmuxTable table);

    /** The running table of {@code smuxId}. */
    SmuxTable getTable(String smuxId);
}
