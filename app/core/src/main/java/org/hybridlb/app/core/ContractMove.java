package org.hybridlb.app.core;

import org.hybridlb.app.core.hmux.HashContract;

/**
 * How the SMuxes hash a VIP that left an HMux (persisted, {@code smuxContracts} of the state): as
 * the switch it left, and, while it moves to a switch whose contract differs, the phase of that move
 * ({@link ContractMoves}). JSON in the state; only the controller thread touches it.
 */
public final class ContractMove {
    /** The SMuxes hash as the switch it left, until they have seen (and pinned) its live connections. */
    public static final String PINNING = "pinning";
    /** The SMuxes hash as {@link #toward}; pinned connections keep their DIPs until none would change DIP there. */
    public static final String CONVERGING = "converging";
    /** No pinned connection would change DIP on {@link #toward} (or the longest hold is over): it may go there. */
    public static final String RELEASED = "released";

    /** The contract the SMuxes follow for the VIP. */
    public HashContract.Selection selection;
    public long basis;
    public HashContract.Encap encap;
    /** The HMux it left (null: it came to the SMuxes otherwise). */
    public String from;
    /** The HMux it moves to; null while it has nowhere to go (then {@link #phase} is null too). */
    public String toward;
    public String phase;
    /** When the move started (epoch ms). */
    public long sinceMillis;
    /** When the SMuxes started pinning: the VIP was first seen on them in the move (0: not yet). */
    public long pinningMillis;
    /** When the SMuxes started hashing as {@link #toward} (0: not yet). */
    public long convergingMillis;

    /** Jackson. */
    public ContractMove() {
    }

    ContractMove(HashContract c, String from) {
        follow(c);
        this.from = from;
    }

    HashContract contract() {
        return HashContract.of(selection, basis, encap);
    }

    void follow(HashContract c) {
        selection = c.selection;
        basis = c.basis;
        encap = c.encap;
    }

    boolean moving() {
        return toward != null && !RELEASED.equals(phase);
    }
}
