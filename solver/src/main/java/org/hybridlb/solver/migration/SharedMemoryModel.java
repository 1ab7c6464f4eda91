package org.hybridlb.solver.migration;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipSet;

/**
 * The planner's view of the shared {@link ResourceModel}: the table entries of a VIP come from
 * the model of an instance that holds that very VIP object (the installed or the target
 * configuration), so the planner, the algorithms and the feasibility checker count alike. A
 * configuration between the two (met only when checking a hand-written plan) is counted by the
 * same rules ({@link ResourceModel#tableEntries}).
 */
public final class SharedMemoryModel implements MemoryModel {
    private final List<ResourceModel> models = new ArrayList<>();
    private final ResourceModel base;
    private final Map<Vip, int[]> cache = new IdentityHashMap<>();

    /** {@code models}: resource models of instances over the same topology (at least one). */
    public SharedMemoryModel(ResourceModel... models) {
        if (models.length == 0) {
            throw new IllegalArgumentException("need at least one resource model");
        }
        this.models.addAll(List.of(models));
        this.base = models[0];
    }

    /** Models for an installed and a target configuration on a topology (memory only, no traffic). */
    public static SharedMemoryModel of(Instance any, VipSet installed, VipSet target) {
        Instance a = any.vipSet() == installed ? any : rebuild(any, installed);
        Instance b = target == installed ? a : any.vipSet() == target ? any : rebuild(any, target);
        return new SharedMemoryModel(a.resources(), b.resources());
    }

    private static Instance rebuild(Instance like, VipSet vips) {
        return Instance.build(like.topology(), like.fabric(), vips, null, like.options());
    }

    /** {ecmp, tunnel, host} entries of {@code v}. */
    private int[] entries(Vip v) {
        int[] e = cache.get(v);
        if (e != null) {
            return e;
        }
        for (ResourceModel m : models) {
            int i = m.instance().vipIndex(v.vip);
            if (i >= 0 && m.instance().vip(i) == v) {
                e = new int[] {m.ecmpEntries(i), m.tunnelEntries(i), m.hostEntries(i)};
                break;
            }
        }
        if (e == null) {
            long[] t = ResourceModel.tableEntries(v);
            e = new int[] {(int) Math.min(Integer.MAX_VALUE, t[0]), (int) t[1], (int) t[2]};
        }
        cache.put(v, e);
        return e;
    }

    @Override
    public int ecmpEntries(Vip v) {
        return entries(v)[0];
    }

    @Override
    public int tunnelEntries(Vip v) {
        return entries(v)[1];
    }

    @Override
    public int hostEntries(Vip v) {
        return entries(v)[2];
    }

    @Override
    public int ecmpCapacity(String switchId) {
        return base.ecmpCapacity(base.instance().switchIndex(switchId));
    }

    @Override
    public int tunnelCapacity(String switchId) {
        return base.tunnelCapacity(base.instance().switchIndex(switchId));
    }

    @Override
    public int hostBudget() {
        return base.hostBudget();
    }

    @Override
    public boolean hasSwitch(String switchId) {
        return base.instance().switchIndex(switchId) >= 0;
    }
}
