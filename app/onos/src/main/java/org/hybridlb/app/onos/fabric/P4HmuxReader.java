package org.hybridlb.app.onos.fabric;

import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ECMP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ECMP_SELECTOR_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4_ID;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HmuxP4Config;
import org.hybridlb.app.core.p4.HmuxP4Layout;
import org.hybridlb.app.core.p4.HmuxP4Reader;
import org.hybridlb.app.core.p4.HmuxP4Snapshot;
import org.hybridlb.app.core.p4.P4Action;
import org.hybridlb.app.core.p4.P4Entity;
import org.hybridlb.app.core.p4.P4Group;
import org.hybridlb.app.core.p4.P4Member;
import org.hybridlb.app.core.p4.P4State;
import org.hybridlb.app.core.p4.P4TableEntry;
import org.hybridlb.solver.model.Smux;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.pi.runtime.PiGroupKey;

/**
 * Reads a device running a hybridlb P4 program from what ONOS holds ({@link P4OnosForm}: the app's
 * rules and groups, and the routes and {@code ecmp_selector} groups of the fabric's other
 * applications) as the core's P4 entities, which the core's {@link HmuxP4Reader} reads into the
 * intent they stand for, with what is inconsistent or foreign and why: the checks live there once,
 * for hybridlbd's P4Runtime southbound and this one alike. Only what ONOS alone can tell is added
 * here: a rule or group of the app that is no entity of the P4 programs is foreign, and a group ONOS
 * has not accepted ({@link GroupConfirmation}) reads as absent.
 *
 * <p>An aggregate's members carry no SMux name in ONOS (a bucket is its action): a bucket is the
 * core's member of the next SMux, in the group's order, whose hop through the fabric's own routes it
 * runs (the core plans them so), or else of the next SMux in order, whose hop the core then finds
 * it does not run.
 */
final class P4HmuxReader {
    /**
     * The cookie base of the core's P4 layout in the ONOS app. It is never written (ONOS names rules
     * by its own flow ids and the app's by their application id): read back, the app's rules carry
     * it ({@link P4OnosForm#cookieOf}).
     */
    static final long COOKIE_BASE = 0x484c4200L;

    /** One device as read: the core's snapshot, and the ONOS objects behind it. */
    static final class Held {
        final HmuxP4Config config;
        final HmuxP4Snapshot snapshot;
        /** The core's reading, with the app's rules and groups of no entity of the programs as foreign. */
        final SwitchReading reading;
        /** Entity key -> the app's rule that is it. */
        final Map<String, FlowEntry> flows;
        /** The app's rules of no entity of the programs. */
        final List<FlowEntry> stray;

        Held(HmuxP4Config config, HmuxP4Snapshot snapshot, SwitchReading reading, Map<String, FlowEntry> flows,
             List<FlowEntry> stray) {
            this.config = config;
            this.snapshot = snapshot;
            this.reading = reading;
            this.flows = flows;
            this.stray = stray;
        }
    }

    private final OnosSender sender;

    P4HmuxReader(OnosSender sender) {
        this.sender = sender;
    }

    /**
     * What a device running {@code profile} offers: CRC-32 selection over weight-unit members
     * (p4/HASH-SPEC.md), IP-in-IP, buckets by position (the {@code bucket} of {@code set_dip} is the
     * switch's counter index, not the VIP's bucket id), DIPs not kept,
     * no data-path fallback; on a Cheetah program, crc32c cookie decoding.
     */
    static SwitchCapability capability(String profile) {
        return new SwitchCapability(HashContract.of(HashContract.Selection.CRC32, 0, HashContract.Encap.IPIP), false,
                false, false, HmuxP4Layout.cookieModes(profile));
    }

    /**
     * The core's view of the fabric from a P4 device: IP-in-IP, the netcfg's next ids towards each
     * switch, each SMux's address. Throws IllegalArgumentException for next ids the core cannot use.
     */
    static HmuxP4Config config(FabricView view, Map<String, Integer> nextIds) {
        Map<String, String> smuxes = new TreeMap<>();
        for (Smux s : view.smuxes().values()) {
            smuxes.put(s.id, s.ip);
        }
        return new HmuxP4Config(HashContract.Encap.IPIP, COOKIE_BASE, nextIds, smuxes);
    }

    Held read(DeviceId dev, HmuxP4Config config) {
        P4OnosForm form = new P4OnosForm(sender.appId(), config);
        P4State device = new P4State();
        Map<String, FlowEntry> flows = new HashMap<>();
        List<FlowEntry> stray = new ArrayList<>();
        Map<ItemKey, String> foreign = new TreeMap<>();
        for (FlowEntry f : sender.deviceFlows(dev)) {
            boolean ours = f.appId() == sender.appId().id();
            P4TableEntry e = form.entryOf(f, ours);
            if (!ours) {
                if (e != null && (e.tableId == ROUTING_ROUTING_V4_ID || e.tableId == ROUTING_NEXT_HOP_ID)) {
                    addUnlessTaken(device, e); // the fabric's routes: the hops towards the SMuxes
                }
            } else if (e == null || !addUnlessTaken(device, e)) {
                stray.add(f);
                foreign.put(ItemKey.foreign(OnosReader.flowName(f)), "no entry of the P4 programs");
            } else {
                flows.put(e.key(), f);
            }
        }
        List<Group> aggregates = new ArrayList<>();
        for (Group g : sender.deviceGroups(dev)) {
            boolean ours = g.appId() != null && g.appId().equals(sender.appId());
            int profile = g.appCookie() instanceof PiGroupKey ? profileOf((PiGroupKey) g.appCookie()) : -1;
            if (ours && profile < 0) {
                foreign.put(ItemKey.foreign("group " + g.id()), "not an action profile group of the P4 programs");
            } else if (ours && profile == ROUTING_ECMP_SELECTOR_ID) {
                aggregates.add(g); // its members are named after the SMux hops are known
            } else if (profile >= 0 && (ours || profile == ROUTING_ECMP_SELECTOR_ID) && held(dev, g)) {
                List<Long> ids = new ArrayList<>();
                List<GroupBucket> buckets = g.buckets().buckets();
                for (int i = 0; i < buckets.size(); i++) {
                    ids.add(P4OnosForm.memberId(g.id().id(), i));
                }
                addGroup(device, g, profile, ids);
            }
        }
        HmuxP4Reader core = new HmuxP4Reader(config);
        if (!aggregates.isEmpty()) {
            Map<String, P4Action> hops = core.read(device).smuxHops;
            for (Group g : aggregates) {
                if (held(dev, g)) {
                    addGroup(device, g, ROUTING_ECMP_SELECTOR_ID, smuxMembers(g, hops, config));
                }
            }
        }
        HmuxP4Snapshot snapshot = core.read(device);
        SwitchReading r = snapshot.reading;
        Map<ItemKey, String> bad = new TreeMap<>(r.inconsistent);
        bad.putAll(foreign);
        return new Held(config, snapshot, new SwitchReading(r.intent, bad, r.unreachable), flows, stray);
    }

    /** Adds {@code e} unless another state of it is there (a rule of another app on the same match); says whether. */
    private static boolean addUnlessTaken(P4State device, P4Entity e) {
        try {
            device.add(e);
            return true;
        } catch (IllegalArgumentException twoStates) {
            return false;
        }
    }

    /** Whether ONOS holds {@code g} as written (confirmed, or pending without a refusal). */
    private boolean held(DeviceId dev, Group g) {
        GroupConfirmation.State s = sender.confirmation().state(dev, g.appCookie(), g, g.buckets().buckets());
        return s == GroupConfirmation.State.CONFIRMED || s == GroupConfirmation.State.PENDING;
    }

    /** The group and members of ONOS's group {@code g}, its members of ids {@code ids}; none when a bucket's action is unknown. */
    private static void addGroup(P4State device, Group g, int profile, List<Long> ids) {
        String name = profile == HMUX_DIP_SELECTOR_ID ? HMUX_DIP_SELECTOR : ROUTING_ECMP_SELECTOR;
        List<P4Entity> out = new ArrayList<>();
        List<GroupBucket> buckets = g.buckets().buckets();
        for (int i = 0; i < buckets.size(); i++) {
            P4Action a = P4OnosForm.actionOf(buckets.get(i));
            if (a == null) {
                return; // read as absent: what points at it is inconsistent and gets the group rewritten
            }
            out.add(new P4Member(name, profile, ids.get(i), a));
        }
        out.add(new P4Group(name, profile, P4OnosForm.coreGroupId(profile, g.id().id()), ids, 0));
        out.forEach(e -> addUnlessTaken(device, e));
    }

    /**
     * The core's member ids of an aggregate's buckets: each the next SMux (in order) whose hop it
     * runs, or else the next SMux in order (a member left with a stale hop).
     */
    private static List<Long> smuxMembers(Group g, Map<String, P4Action> hops, HmuxP4Config config) {
        List<String> smuxes = new ArrayList<>(config.smuxAddresses.keySet());
        List<Long> ids = new ArrayList<>();
        int next = 0;
        List<GroupBucket> buckets = g.buckets().buckets();
        for (int i = 0; i < buckets.size(); i++) {
            P4Action a = P4OnosForm.actionOf(buckets.get(i));
            int k = next;
            while (k < smuxes.size() && (a == null || !a.equals(hops.get(smuxes.get(k))))) {
                k++;
            }
            if (k == smuxes.size()) {
                k = next; // a stale hop: the SMux in its place, whose hop the core finds it does not run
            }
            if (k < smuxes.size()) {
                ids.add(config.smuxMemberId(smuxes.get(k)));
                next = k + 1;
            } else {
                ids.add(P4OnosForm.memberId(g.id().id(), i)); // towards no SMux: the core says so
            }
        }
        return ids;
    }

    private static int profileOf(PiGroupKey k) {
        String p = k.actionProfileId().id();
        return p.equals(HMUX_DIP_SELECTOR) ? HMUX_DIP_SELECTOR_ID : p.equals(ROUTING_ECMP_SELECTOR) ? ROUTING_ECMP_SELECTOR_ID
                : -1;
    }
}
