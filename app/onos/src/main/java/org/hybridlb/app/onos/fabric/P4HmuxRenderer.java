package org.hybridlb.app.onos.fabric;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.p4.HmuxP4Plan;
import org.hybridlb.app.core.p4.P4Diff;
import org.hybridlb.app.core.p4.P4Entity;
import org.hybridlb.app.core.p4.P4Group;
import org.hybridlb.app.core.p4.P4State;
import org.hybridlb.app.core.p4.P4TableEntry;
import org.hybridlb.app.core.p4.P4Update;
import org.hybridlb.app.core.port.SouthboundException;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.pi.runtime.PiActionProfileGroupId;
import org.onosproject.net.pi.runtime.PiGroupKey;

/**
 * Renders a {@link SwitchDelta} on a device running a hybridlb P4 program: the core plans the
 * entities of the switch's target intent from what it was read to hold ({@link HmuxP4Plan}, the
 * same plan hybridlbd's P4Runtime southbound sends) and diffs them ({@link P4Diff}); this puts each
 * update into ONOS's terms ({@link P4OnosForm}) in the stages of {@link OnosRenderer.Stages}:
 * action profile groups first, held by ONOS before any entry points at them (members live inside
 * their groups in ONOS); then the entries other entries lead to ({@code dip_select}, the Cheetah
 * servers, {@code next_hop}); then service entries and routes with the route removals; then the
 * removals of the entries led to; the groups nothing selects any more after the batch. A service
 * keeps its id, so a pool change is one group modification.
 */
final class P4HmuxRenderer {
    private final OnosSender sender;

    P4HmuxRenderer(OnosSender sender) {
        this.sender = sender;
    }

    /** Writes the groups of {@code d} on {@code sw} and says which flows change, in {@code out}. */
    void render(FabricView.SwitchSpec sw, SwitchDelta d, P4HmuxReader.Held held, OnosRenderer.Stages out) {
        DeviceId dev = sw.device;
        SwitchIntent target = d.target != null ? d.target : held.snapshot.reading.intent.after(d);
        P4State want;
        try {
            want = new HmuxP4Plan(held.config).plan(target, held.snapshot);
        } catch (IllegalArgumentException e) {
            throw new SouthboundException(sw.sw.id + ": " + e.getMessage());
        }
        P4OnosForm form = new P4OnosForm(sender.appId(), held.config);
        // every group as planned, members inside (ONOS writes a group only when it holds other buckets):
        // a member's change is its groups' change here
        for (P4Entity e : want.all()) {
            if (e instanceof P4Group) {
                P4Group g = (P4Group) e;
                PiGroupKey key = P4OnosForm.groupKey(g);
                sender.putGroup(dev, key, g.key(), GroupDescription.Type.SELECT,
                        P4OnosForm.buckets(g, want.members(g.profileId)), key.groupId());
            }
        }
        out.cleared.addAll(held.stray);
        for (P4Update u : P4Diff.flat(P4Diff.batches(held.snapshot.ours, want))) {
            if (!(u.entity instanceof P4TableEntry)) {
                continue; // groups above; groups nothing selects go in cleanUp
            }
            boolean leadTo = u.entity.dependencyRank() == 2;
            if (u.type != P4Update.Type.DELETE) {
                (leadTo ? out.add : out.routes).add(form.rule(dev, (P4TableEntry) u.entity));
            } else if (held.flows.containsKey(u.entity.key())) {
                (leadTo ? out.removals : out.routeRemovals).add(held.flows.get(u.entity.key()));
            }
        }
    }

    /** After the flows: every action profile group of the app on {@code dev} that no entry of the app selects goes. */
    void cleanUp(DeviceId dev, List<FlowEntry> flowsNow) {
        Set<Integer> selected = new HashSet<>();
        for (FlowEntry e : flowsNow) {
            Object a = P4OnosForm.tableAction(e.treatment());
            if (a instanceof PiActionProfileGroupId) {
                selected.add(((PiActionProfileGroupId) a).id());
            }
        }
        List<Group> unused = sender.groups(dev).stream().filter(g -> !(g.appCookie() instanceof PiGroupKey)
                || !selected.contains(((PiGroupKey) g.appCookie()).groupId())).collect(Collectors.toList());
        sender.removeGroups(unused);
    }
}
