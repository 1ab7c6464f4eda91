package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.cheetah.CookieState;
import org.hybridlb.app.core.cheetah.OwnerSlots;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Vip;

/**
 * Publishes the installed configuration to the live SMuxes as one versioned table (the SMux swaps
 * it atomically). Versions only grow: the last one is persisted and, when an SMux runs a higher
 * one (our state is older than the SMux's), the next goes above it. Loop thread only.
 */
final class SmuxTablePublisher {
    private static final Logger LOG = Logger.getLogger(SmuxTablePublisher.class.getName());

    private final SmuxControl smux;
    private final HashContracts contracts;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    private final Status status;
    /** The table last sent (any version), to see whether a wave changed it. */
    private SmuxTable sent;

    SmuxTablePublisher(SmuxControl smux, HashContracts contracts, StateKeeper keeper, BucketIds ids,
                       FabricInputs inputs, Status status) {
        this.smux = smux;
        this.contracts = contracts;
        this.keeper = keeper;
        this.ids = ids;
        this.inputs = inputs;
        this.status = status;
    }

    /**
     * The installed configuration as the SMux table of {@code version}, each VIP hashed as its HMux does;
     * a cheetah VIP with its key, mode (its cookieHash), mechanism and its hosts' server ids, a
     * cheetah-stateful one also with the SMuxes' owner slots ({@link OwnerSlots}).
     */
    SmuxTable table(long version) {
        List<VipEntry> entries = new ArrayList<>();
        Map<String, SmuxTable.Cheetah> cookies = new HashMap<>();
        CookieState c = keeper.state().cookies;
        for (Vip v : keeper.state().installedVips.values()) {
            entries.add(ids.smuxEntry(v));
            if (v.cheetah()) {
                String key = c.keys.get(v.vip);
                if (key == null) {
                    throw new IllegalStateException("cheetah VIP " + v.vip + " has no cookie key yet");
                }
                List<String> owners = v.stateful() ? OwnerSlots.owners(c) : null;
                if (owners != null && owners.isEmpty()) {
                    throw new IllegalStateException("cheetah-stateful VIP " + v.vip + ": no SMux has an owner slot yet");
                }
                cookies.put(v.vip, new SmuxTable.Cheetah(v.effectiveAffinity(), v.effectiveMechanism(), key,
                        Cookie.modeOf(v), c.serverIds, owners));
            }
        }
        return SmuxTable.of(version, entries, contracts.forEntries(entries), cookies);
    }

    /**
     * Sends the table again when it changed since it was last sent (a VIP that moved to an HMux with
     * another hash contract); returns its version, or -1 when nothing was sent.
     */
    long publishIfChanged() {
        return sent != null && table(0).sameVips(sent) ? -1 : publish();
    }

    /**
     * A wave changed the table: sends it to every live SMux with a new version, which it returns
     * (-1 when no SMux is live). Throws when an SMux refuses it or cannot be reached.
     */
    long publish() {
        long version = -1;
        for (String id : inputs.liveIds()) {
            if (version < 0) {
                version = ++keeper.state().smuxTableVersion;
                sent = table(version);
            }
            smux.putTable(id, sent);
        }
        return version;
    }

    /**
     * Repair: sends the table only to the live SMuxes whose running table differs (restart, an
     * SMux back), so that nothing right is re-applied; an SMux that fails is reported and skipped.
     */
    void repair() {
        long version = -1;
        ControllerState state = keeper.state();
        for (String id : inputs.liveIds()) {
            SmuxTable running;
            try {
                running = smux.getTable(id);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "reading the table of SMux " + id, e);
                status.error("reading the table of SMux " + id + ": " + e.getMessage());
                continue;
            }
            if (running != null && running.version > state.smuxTableVersion) {
                state.smuxTableVersion = running.version; // our state is older than the SMux's: go above it
            }
            if (table(0).sameVips(running)) {
                sent = running;
                continue;
            }
            if (version < 0) {
                version = ++state.smuxTableVersion;
            }
            try {
                sent = table(Math.max(version, running == null ? 0 : running.version + 1));
                smux.putTable(id, sent);
                status.repairs++;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "repairing SMux " + id, e);
                status.error("repairing SMux " + id + ": " + e.getMessage());
            }
        }
    }

    /** Reads every live SMux back; throws when one does not run exactly {@code version} of the installed table. */
    void verify(long version) {
        SmuxTable want = table(version);
        for (String id : inputs.liveIds()) {
            SmuxTable have = smux.getTable(id);
            if (have == null || have.version != version || !want.sameVips(have)) {
                throw new SouthboundException("SMux " + id + " runs table version "
                        + (have == null ? "none" : have.version) + ", not the " + version + " just sent");
            }
        }
    }
}
