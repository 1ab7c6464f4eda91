package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;

/**
 * How the SMuxes hash and encapsulate each VIP so that they pick what its HMux picks (the
 * southbound's {@link HashContract} of that switch), and where no SMux could: switches that offer
 * no agreement at all (they serve as no HMux, like a switch without tunnels) and, per VIP, the
 * switches whose selection cannot pick from its pools, or that cannot decode the cookies of a
 * cheetah VIP in the mode its hosts encode them ({@link Cookie#modeOf}; it stays off them); a
 * cheetah-stateful VIP stays off every switch. Loop thread only.
 */
final class HashContracts {
    /** Why a cheetah VIP whose hosts encode with {@code mode} stays off a switch that cannot decode it. */
    static String cookiesUndecoded(Cookie.HashMode mode) {
        return "affinity cheetah: the switch cannot decode the VIP's Cheetah cookies (hash mode " + mode.wireName()
                + ": Open vSwitch reads no TCP options, the P4 programs hash crc32c only), so the VIP stays off it"
                + " and lives on the SMuxes";
    }

    /** Why a cheetah-stateful VIP stays off every switch. */
    static final String STATEFUL_ON_SMUXES = "affinity cheetah-stateful: its connections' state lives on their owner"
            + " SMuxes (two tiers), which a switch neither keeps nor forwards to, so the VIP lives on the SMuxes";

    /** Why a cheetah VIP with a UDP service stays off every switch. */
    static final String QUIC_ON_SMUXES = "affinity cheetah with a UDP service: UDP to a cheetah VIP is QUIC, placed by"
            + " the server id in its connection ids (COOKIE-SPEC §13), which no switch decodes (a switch would hash"
            + " it), so the VIP lives on the SMuxes";

    /** Why a Prism VIP with fabric steering stays off every switch. */
    static final String PRISM_PINS_ON_SMUXES = "prism steering fabric: its handed-off connections are steered by flow"
            + " pins on the SMuxes (POST /pins), which no switch renders yet, so the VIP lives on the SMuxes";

    private final HmuxProgrammer hmux;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    /** For a fabric where no switch can be an HMux: the configured encapsulation, Open vSwitch's hash. */
    private final HashContract none;

    HashContracts(HmuxProgrammer hmux, StateKeeper keeper, BucketIds ids, FabricInputs inputs, String smuxEncap) {
        this.hmux = hmux;
        this.keeper = keeper;
        this.ids = ids;
        this.inputs = inputs;
        this.none = HashContract.of(HashContract.Selection.OVS_HASH, 0, HashContract.Encap.of(smuxEncap));
    }

    /** Switches of {@code t} meant to be HMuxes (they have tunnel entries) whose contract is "no agreement", with why. */
    Map<String, String> noAgreement(Topology t) {
        Map<String, String> out = new TreeMap<>();
        for (Switch s : t.switches) {
            if (s.tables.tunnel > 0) {
                HashContract c = hmux.capability(s.id).hash;
                if (!c.agrees()) {
                    out.put(s.id, "no SMux can hash as it does: " + c.noAgreement);
                }
            }
        }
        return out;
    }

    /**
     * The contract the SMuxes follow for each of {@code entries}: that of its HMux, or for a VIP
     * on the SMuxes, the one of the HMux it left or moves to ({@link ContractMoves}), else the
     * fabric's (the one most switches that can be HMuxes offer); CRC32 with that encapsulation for a
     * VIP whose pools the contract's selection cannot pick from.
     */
    Map<String, HashContract> forEntries(Collection<VipEntry> entries) {
        ControllerState state = keeper.state();
        Map<String, HashContract> bySwitch = new HashMap<>();
        HashContract fabric = fabricContract(bySwitch);
        Map<String, HashContract> out = new LinkedHashMap<>();
        for (VipEntry e : entries) {
            out.put(e.vip, followed(state.placement(e.vip), e, fabric, bySwitch));
        }
        return out;
    }

    /** Contracts looked up for one round: each switch's southbound is asked once. */
    final class Round {
        private final Map<String, HashContract> bySwitch = new HashMap<>();
        private final HashContract fabric = fabricContract(bySwitch);

        /** The contract the SMuxes would follow for {@code e} placed at {@code at} (a switch, or {@code smux}). */
        HashContract at(String at, VipEntry e) {
            return followed(at, e, fabric, bySwitch);
        }
    }

    Round round() {
        return new Round();
    }

    /**
     * That of the HMux at {@code at} (down or not: {@link ContractMoves#failingOver}); on the SMuxes
     * the one they follow since it left an HMux ({@link ContractMove}), else the fabric's; CRC32 where
     * its selection cannot pick from the pools.
     */
    private HashContract followed(String at, VipEntry e, HashContract fabric, Map<String, HashContract> bySwitch) {
        HashContract c;
        ContractMove m = keeper.state().smuxContracts.get(e.vip);
        if (Assignment.SMUX.equals(at) || (inputs.down.contains(at) && m != null)) {
            c = m != null ? m.contract() : fabric;
        } else {
            c = bySwitch.computeIfAbsent(at, sw -> hmux.capability(sw).hash);
        }
        if (!c.agrees()) {
            c = fabric;
        }
        if (c.refuses(pools(e)) != null) {
            c = HashContract.of(HashContract.Selection.CRC32, 0, c.encap);
        }
        return c;
    }

    /**
     * Per VIP of {@code target}: the switches of {@code t} that could be its HMux but whose
     * contract the SMuxes cannot follow for its pools, and why. The planner keeps it off them.
     */
    Map<String, AssignmentView.HashUnmatched> unmatched(Map<String, Vip> target, Topology t) {
        Map<HashContract, List<String>> byContract = new LinkedHashMap<>();
        Map<Cookie.HashMode, List<String>> undecoding = new EnumMap<>(Cookie.HashMode.class);
        List<String> hmuxCapable = new ArrayList<>();
        for (Switch s : t.switches) {
            if (s.tables.tunnel > 0) {
                SwitchCapability cap = hmux.capability(s.id);
                if (cap.hash.agrees()) {
                    hmuxCapable.add(s.id);
                    byContract.computeIfAbsent(cap.hash, k -> new ArrayList<>()).add(s.id);
                    for (Cookie.HashMode mode : Cookie.HashMode.values()) {
                        if (!cap.decodes(mode)) {
                            undecoding.computeIfAbsent(mode, m -> new ArrayList<>()).add(s.id);
                        }
                    }
                }
            }
        }
        Map<String, AssignmentView.HashUnmatched> out = new TreeMap<>();
        for (Vip v : target.values()) {
            List<List<Bucket>> pools = pools(ids.entry(v));
            List<String> switches = new ArrayList<>();
            String why = null;
            for (Map.Entry<HashContract, List<String>> c : byContract.entrySet()) {
                String refused = c.getKey().refuses(pools);
                if (refused != null) {
                    switches.addAll(c.getValue());
                    why = why == null ? refused : why;
                }
            }
            List<String> reasons = new ArrayList<>();
            if (why != null) {
                reasons.add(why + ": the SMuxes could not pick the DIPs such an HMux picks, so the VIP stays off it");
            }
            List<String> noCookies = v.cheetah() ? undecoding.getOrDefault(Cookie.modeOf(v), List.of()) : List.of();
            if (v.stateful() || carriesQuic(v) || fabricPinned(v)) {
                hmuxCapable.stream().filter(sw -> !switches.contains(sw)).forEach(switches::add);
                reasons.add(v.stateful() ? STATEFUL_ON_SMUXES : carriesQuic(v) ? QUIC_ON_SMUXES : PRISM_PINS_ON_SMUXES);
            } else if (!noCookies.isEmpty()) {
                // a cheetah connection is placed by its cookie wherever it is muxed: only a decoder may hold it
                noCookies.stream().filter(sw -> !switches.contains(sw)).forEach(switches::add);
                reasons.add(cookiesUndecoded(Cookie.modeOf(v)));
            }
            if (!switches.isEmpty()) {
                out.put(v.vip, new AssignmentView.HashUnmatched(switches, String.join("; ", reasons)));
            }
        }
        return out;
    }

    /** A Prism VIP whose hand-offs are steered by fabric pins: the SMuxes hold them (SmuxFabricPins). */
    static boolean fabricPinned(Vip v) {
        return v.prism != null && v.prism.fabricSteering();
    }

    /** A cheetah VIP with a service UDP reaches ({@code udp} or {@code any}): the SMuxes treat that UDP as QUIC. */
    static boolean carriesQuic(Vip v) {
        return v.cheetah() && v.ports.stream().anyMatch(p -> !"tcp".equals(p.proto));
    }

    private HashContract fabricContract(Map<String, HashContract> bySwitch) {
        Map<HashContract, Integer> count = new LinkedHashMap<>();
        for (Switch s : inputs.topology().switches) {
            if (s.tables.tunnel > 0) {
                HashContract c = bySwitch.computeIfAbsent(s.id, sw -> hmux.capability(sw).hash);
                if (c.agrees()) {
                    count.merge(c, 1, Integer::sum);
                }
            }
        }
        HashContract best = none;
        int most = 0;
        for (Map.Entry<HashContract, Integer> e : count.entrySet()) {
            if (e.getValue() > most) {
                best = e.getKey();
                most = e.getValue();
            }
        }
        return best;
    }

    private static List<List<Bucket>> pools(VipEntry e) {
        List<List<Bucket>> out = new ArrayList<>();
        for (ServiceEntry s : e.ports) {
            out.add(s.dips);
        }
        return out;
    }
}
