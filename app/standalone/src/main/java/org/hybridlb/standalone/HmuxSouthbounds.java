package org.hybridlb.standalone;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.standalone.ovs.OvsHmuxSouthbound;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;

/**
 * The fabric's HMux southbound, switch by switch as fabric.json selects it: P4Runtime for a switch
 * with a {@code "p4"} object, Open vSwitch over OpenFlow for the others. Reads and applies go to
 * both at once; a failure of either is reported once both are done.
 */
public final class HmuxSouthbounds implements HmuxProgrammer {
    private final OvsHmuxSouthbound ovs;
    private final P4rtHmuxSouthbound p4;

    public HmuxSouthbounds(OvsHmuxSouthbound ovs, P4rtHmuxSouthbound p4) {
        this.ovs = ovs;
        this.p4 = p4;
    }

    private HmuxProgrammer of(String switchId) {
        return p4.handles(switchId) ? p4 : ovs;
    }

    @Override
    public SwitchCapability capability(String switchId) {
        return of(switchId).capability(switchId);
    }

    @Override
    public Map<String, SwitchReading> read(Collection<String> switchIds) {
        List<String> toP4 = new ArrayList<>();
        List<String> toOvs = new ArrayList<>();
        switchIds.forEach(id -> (p4.handles(id) ? toP4 : toOvs).add(id));
        Map<String, SwitchReading> got = new LinkedHashMap<>();
        if (!toOvs.isEmpty()) {
            got.putAll(ovs.read(toOvs));
        }
        if (!toP4.isEmpty()) {
            got.putAll(p4.read(toP4));
        }
        Map<String, SwitchReading> out = new LinkedHashMap<>();
        switchIds.forEach(id -> out.put(id, got.get(id)));
        return out;
    }

    @Override
    public void apply(Map<String, SwitchDelta> deltas) {
        Map<String, SwitchDelta> toP4 = new LinkedHashMap<>();
        Map<String, SwitchDelta> toOvs = new LinkedHashMap<>();
        deltas.forEach((id, d) -> (p4.handles(id) ? toP4 : toOvs).put(id, d));
        List<String> failed = new ArrayList<>();
        java.util.concurrent.CompletableFuture<Void> p4Done = toP4.isEmpty()
                ? java.util.concurrent.CompletableFuture.completedFuture(null)
                : java.util.concurrent.CompletableFuture.runAsync(() -> p4.apply(toP4));
        if (!toOvs.isEmpty()) {
            try {
                ovs.apply(toOvs);
            } catch (SouthboundException e) {
                failed.add(e.getMessage());
            }
        }
        try {
            p4Done.join();
        } catch (java.util.concurrent.CompletionException e) {
            failed.add(e.getCause() instanceof SouthboundException ? e.getCause().getMessage() : String.valueOf(e.getCause()));
        }
        if (!failed.isEmpty()) {
            throw new SouthboundException(String.join("; ", failed));
        }
    }
}
