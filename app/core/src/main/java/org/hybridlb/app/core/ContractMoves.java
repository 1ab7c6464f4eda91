package org.hybridlb.app.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.view.AssignmentView.HeldVip;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Vip;

/**
 * A VIP moving between HMuxes whose hash contracts differ (an Open vSwitch select group and a P4
 * crc32 selector: {@link HashContract}) would land each connection on the DIP the new switch picks.
 * Duet keeps connections across muxes only because every mux hashes alike (§3.5.1); where they do
 * not, the move goes through the SMuxes, whose connection tables pin (§3.5.2):
 * <ol>
 * <li>{@link ContractMove#PINNING}: the VIP leaves its HMux for the SMuxes, which hash it as that
 *     switch did, so every connection keeps its DIP and is pinned at its first packet there; this
 *     lasts {@code contractPinTime} from its arrival;</li>
 * <li>{@link ContractMove#CONVERGING}: the SMuxes hash it as the switch it moves to (new connections
 *     land where that switch will put them; pinned ones keep their DIPs) until they count no pinned
 *     connection that switch would send elsewhere ({@link DivergingConnections}), or for at most
 *     {@code poolGrowthHoldMax}, as a grown pool;</li>
 * <li>{@link ContractMove#RELEASED}: the planner lets it go to that switch.</li>
 * </ol>
 * A VIP on the SMuxes moving to a switch whose contract differs from the one they follow for it
 * starts converging at once (they have pinned its connections all along), unless it left an HMux
 * less than {@code contractPinTime} ago. Between switches of the same contract a move is direct, as
 * ever, and so is a cheetah VIP's (its connections follow their cookies, which every mux it may
 * live on decodes). The contract the SMuxes follow for a VIP that left an HMux, and the move, are
 * persisted ({@code smuxContracts}), so a restart keeps both. Loop thread only.
 */
final class ContractMoves {
    private static final Logger LOG = Logger.getLogger(ContractMoves.class.getName());

    private final HashContracts contracts;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    private final SmuxControl smux;
    private final SmuxTablePublisher tables;
    private final Status status;
    private final Duration pinTime;
    private final Duration holdMax;
    /** Diverging connections last counted per converging VIP (-1: an SMux did not answer). */
    private final Map<String, Long> diverging = new HashMap<>();

    ContractMoves(HashContracts contracts, StateKeeper keeper, BucketIds ids, FabricInputs inputs, SmuxControl smux,
                  SmuxTablePublisher tables, Status status, Duration pinTime, Duration holdMax) {
        this.contracts = contracts;
        this.keeper = keeper;
        this.ids = ids;
        this.inputs = inputs;
        this.smux = smux;
        this.tables = tables;
        this.status = status;
        this.pinTime = pinTime;
        this.holdMax = holdMax;
    }

    /**
     * Rewrites the planned placements {@code to} of {@code target}: a VIP whose move crosses hash
     * contracts stays on (or goes to) the SMuxes until its move is released. Records the contract
     * the SMuxes follow for every VIP leaving an HMux, and forgets it for VIPs on an HMux.
     */
    void route(Map<String, String> to, Map<String, Vip> target) {
        ControllerState state = keeper.state();
        Map<String, ContractMove> moves = state.smuxContracts;
        moves.keySet().retainAll(target.keySet());
        Map<String, ContractMove> leaving = new HashMap<>(moves); // moves planned before, their VIP still on its HMux
        moves.keySet().removeIf(v -> onHmux(state, v)); // an HMux's VIP: the SMuxes follow that HMux
        long now = System.currentTimeMillis();
        HashContracts.Round contract = contracts.round();
        for (Map.Entry<String, String> t : to.entrySet()) {
            String v = t.getKey();
            String want = t.getValue();
            if (target.get(v).cheetah()) {
                moves.remove(v); // its connections follow their cookies on any mux that decodes them
                continue;
            }
            String at = state.placement(v);
            ContractMove m = moves.get(v);
            if (at.equals(want) && (m == null || m.toward == null)) {
                continue; // stays where it is: nothing changes
            }
            VipEntry e = ids.entry(target.get(v));
            if (Assignment.SMUX.equals(want)) {
                if (onHmux(state, v)) {
                    moves.put(v, new ContractMove(contract.at(at, e), at));
                } else if (m != null && m.toward != null) {
                    LOG.info("VIP " + v + ": no longer moves to " + m.toward + "; it stays on the SMuxes, which hash as "
                            + m.contract());
                    m.toward = null;
                    m.phase = null;
                }
                continue;
            }
            HashContract next = contract.at(want, e);
            if (onHmux(state, v)) {
                HashContract left = contract.at(at, e);
                if (!left.equals(next)) {
                    m = leaving.get(v);
                    if (m == null || !at.equals(m.from) || !want.equals(m.toward) || !left.equals(m.contract())) {
                        m = new ContractMove(left, at);
                        start(v, m, want, ContractMove.PINNING, now);
                    }
                    moves.put(v, m);
                    t.setValue(Assignment.SMUX);
                }
                continue;
            }
            HashContract followed = contract.at(Assignment.SMUX, e);
            if (m == null || m.toward == null) {
                if (followed.equals(next)) {
                    continue; // the SMuxes hash as it does already: straight there
                }
                if (m == null) {
                    m = new ContractMove(followed, null);
                    moves.put(v, m);
                }
                // just off an HMux, the SMuxes may not have seen every connection yet
                boolean arriving = m.from != null && (m.pinningMillis == 0 || now - m.pinningMillis < pinTime.toMillis());
                start(v, m, want, arriving ? ContractMove.PINNING : ContractMove.CONVERGING, now);
            } else if (!want.equals(m.toward)) {
                LOG.info("VIP " + v + ": now moves to " + want + " (" + next + ") instead of " + m.toward);
                m.toward = want;
                if (ContractMove.RELEASED.equals(m.phase)) {
                    m.phase = ContractMove.CONVERGING;
                }
            } else if (ContractMove.RELEASED.equals(m.phase) && followed.equals(next)) {
                continue; // released: go
            } else if (ContractMove.RELEASED.equals(m.phase)) {
                m.phase = ContractMove.CONVERGING; // the switch's contract changed meanwhile
            }
            t.setValue(Assignment.SMUX);
        }
    }

    /**
     * Before the VIPs of failed switches fall to the SMuxes: each keeps the contract of the switch it
     * was on, so the SMuxes that take its traffic over hash as that switch did and its connections
     * keep their DIPs (§3.5.1, whichever contract the fabric's other switches offer); a later move to
     * another HMux goes as from that switch.
     */
    void failingOver() {
        ControllerState state = keeper.state();
        HashContracts.Round contract = null;
        for (String sw : inputs.down) {
            for (Map.Entry<String, List<String>> h : state.hmuxes.entrySet()) {
                String v = h.getKey();
                Vip installed = state.installedVips.get(v);
                if (!h.getValue().contains(sw) || installed == null || installed.cheetah()
                        || state.smuxContracts.containsKey(v)) {
                    continue; // cheetah connections follow their cookies
                }
                contract = contract != null ? contract : contracts.round();
                ContractMove m = new ContractMove(contract.at(sw, ids.entry(installed)), sw);
                state.smuxContracts.put(v, m);
                LOG.info("VIP " + v + ": its HMux " + sw + " is down; the SMuxes hash it as " + sw + " did ("
                        + m.contract() + ")");
            }
        }
    }

    private void start(String v, ContractMove m, String toward, String phase, long now) {
        m.toward = toward;
        m.phase = phase;
        m.sinceMillis = now;
        m.convergingMillis = 0;
        LOG.info("VIP " + v + " " + reason(m));
    }

    /**
     * Moves each VIP on the SMuxes along: pinning until {@code contractPinTime} after its arrival,
     * then the SMuxes hash as the switch it moves to (the table is sent and read back; on failure the
     * move waits and the error is reported), then released once no pinned connection diverges or
     * after the longest hold (the next plan places it).
     */
    void advance() {
        ControllerState state = keeper.state();
        long now = System.currentTimeMillis();
        List<String> switching = new ArrayList<>();
        Map<String, ContractMove> before = new HashMap<>();
        DivergingConnections counted = null;
        HashContracts.Round contract = null;
        for (Map.Entry<String, ContractMove> me : state.smuxContracts.entrySet()) {
            String v = me.getKey();
            ContractMove m = me.getValue();
            Vip installed = state.installedVips.get(v);
            if (installed == null || onHmux(state, v)) {
                continue; // the wave that takes it to the SMuxes has not run
            }
            if (m.pinningMillis == 0) {
                m.pinningMillis = now;
            }
            if (!m.moving()) {
                continue;
            }
            ContractMove was = copy(m);
            if (ContractMove.PINNING.equals(m.phase)) {
                if (now - m.pinningMillis < pinTime.toMillis()) {
                    continue;
                }
                m.phase = ContractMove.CONVERGING;
            }
            contract = contract != null ? contract : contracts.round();
            HashContract next = contract.at(m.toward, ids.entry(installed));
            if (!next.equals(m.contract())) {
                before.put(v, was);
                m.follow(next);
                m.convergingMillis = now;
                switching.add(v);
                continue; // counted once the SMuxes hash so
            }
            if (counted == null) {
                counted = DivergingConnections.count(smux, inputs);
            }
            long n = counted.of(v);
            diverging.put(v, n);
            if (n == 0) {
                LOG.info("VIP " + v + ": no pinned connection would change DIP on " + m.toward + "; released after "
                        + (now - m.sinceMillis) / 1000 + " s on the SMuxes");
                m.phase = ContractMove.RELEASED;
            } else if (now - m.convergingMillis >= holdMax.toMillis()) {
                LOG.warning("VIP " + v + ": released to " + m.toward + " after the longest hold (" + holdMax.toSeconds()
                        + " s); " + (n >= 0 ? n + " pinned connections" : "connections not counted")
                        + " may change DIP there");
                m.phase = ContractMove.RELEASED;
            }
        }
        diverging.keySet().retainAll(state.smuxContracts.keySet());
        if (!switching.isEmpty()) {
            switchContracts(switching, before);
        }
    }

    /** Sends the SMuxes the table that hashes {@code vips} as their next switches; puts the moves back if it fails. */
    private void switchContracts(List<String> vips, Map<String, ContractMove> before) {
        try {
            long version = tables.publish();
            if (version >= 0) {
                tables.verify(version);
            }
            for (String v : vips) {
                ContractMove m = keeper.state().smuxContracts.get(v);
                LOG.info("VIP " + v + ": the SMuxes hash it as " + m.toward + " does (" + m.contract()
                        + "); it goes there once no pinned connection would change DIP");
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "hashing " + vips + " as their next HMuxes on the SMuxes", e);
            status.error("hashing " + vips + " as their next HMuxes on the SMuxes: " + e.getMessage());
            keeper.state().smuxContracts.putAll(before); // still pinning as before; the repair resends the table
        }
    }

    private static ContractMove copy(ContractMove m) {
        return Json.read(Json.write(m), ContractMove.class);
    }

    /** Moves under way, for {@code heldOnSmuxes} of {@code GET /assignment}. */
    Map<String, HeldVip> view() {
        Map<String, HeldVip> out = new LinkedHashMap<>();
        keeper.state().smuxContracts.forEach((v, m) -> {
            if (m.moving()) {
                out.put(v, new HeldVip(m.sinceMillis, ContractMove.CONVERGING.equals(m.phase) ? diverging.get(v) : null,
                        m.toward, reason(m)));
            }
        });
        return out;
    }

    /** Moves under way (the metrics' held VIPs). */
    int count() {
        return (int) keeper.state().smuxContracts.values().stream().filter(ContractMove::moving).count();
    }

    private String reason(ContractMove m) {
        String left = m.from == null ? "as they did" : "as " + m.from + " did";
        return ContractMove.PINNING.equals(m.phase)
                ? "moves to " + m.toward + ", whose hash contract differs: the SMuxes hash it " + left + " ("
                        + m.contract() + ") for " + pinTime.toMillis() / 1000.0 + " s so that they pin its connections,"
                        + " then as " + m.toward + " until none of them would change DIP there"
                : "moves to " + m.toward + ", whose hash contract differs: the SMuxes hash it as " + m.toward + " does"
                        + " and keep its pinned connections on their DIPs until none would change DIP there";
    }

    private boolean onHmux(ControllerState state, String v) {
        String at = state.placement(v);
        return !Assignment.SMUX.equals(at) && !inputs.down.contains(at);
    }
}
