package org.hybridlb.solver.migration;

import org.hybridlb.solver.model.Vip;

/**
 * Switch table entries as the planner needs them. A VIP on an HMux takes ECMP and tunnel
 * entries on that switch, and host-table entries on every switch (its /32 is installed
 * fabric-wide), so the host table is one budget however many HMuxes announce the VIP.
 */
public interface MemoryModel {
    int ecmpEntries(Vip v);

    int tunnelEntries(Vip v);

    int hostEntries(Vip v);

    int ecmpCapacity(String switchId);

    int tunnelCapacity(String switchId);

    int hostBudget();

    /** Whether the switch exists in the fabric. */
    boolean hasSwitch(String switchId);
}
