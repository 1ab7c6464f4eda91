package org.hybridlb.solver.topology;

import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;

/**
 * Builds a fabric with one naming and addressing plan shared by every generator.
 *
 * <p>Names: {@code core-<i>}, {@code agg-<pod>-<i>}, {@code tor-<pod>-<i>},
 * {@code host-<pod>-<tor>-<h>}, {@code smux-<i>} (indices from 0).
 *
 * <p>Addressing: every ToR owns one rack subnet carved in order from {@value #RACK_BASE}/8;
 * the g-th ToR created (pods in order, ToRs in order inside a pod) gets
 * {@code 10.0.0.0 + g * rackSize}. Hosts take the first addresses of the rack (.1, .2, ...),
 * SMuxes the last usable ones counting down. The rack size is the smallest power of two,
 * at least 64 (/26), that holds the hosts, the SMuxes, network and broadcast addresses.
 * DIPs (VMs, containers) get their own addresses from the workload generator, with
 * {@code hostIp} pointing at these host addresses.
 */
final class FabricBuilder {
    static final String RACK_BASE = "10.0.0.0";
    static final int MIN_RACK_BITS = 6;

    private final List<Switch> switches = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();
    private final List<Host> hosts = new ArrayList<>();
    private final List<Smux> smuxes = new ArrayList<>();
    private final int rackBits;
    private int racks;

    /** {@code perRack}: the most hosts plus SMuxes any one ToR will carry. */
    FabricBuilder(int perRack) {
        int bits = MIN_RACK_BITS;
        while ((1 << bits) < perRack + 2) {
            bits++;
        }
        this.rackBits = bits;
    }

    static String coreId(int i) {
        return "core-" + i;
    }

    static String aggId(int pod, int i) {
        return "agg-" + pod + "-" + i;
    }

    static String torId(int pod, int i) {
        return "tor-" + pod + "-" + i;
    }

    void addSwitch(String id, SwitchRole role, Integer pod, TableCapacity tables) {
        switches.add(new Switch(id, role, pod, tables));
    }

    void addLink(String a, String b, double capacityBps) {
        links.add(new Link(a, b, capacityBps));
    }

    /** Adds a ToR with its rack of hosts and, when {@code smuxCount > 0}, SMuxes on it. */
    void addTor(int pod, int index, TableCapacity tables, int hostCount, int smuxCount, double smuxCapacityBps) {
        String tor = torId(pod, index);
        addSwitch(tor, SwitchRole.TOR, pod, tables);
        long base = Integer.toUnsignedLong(Ipv4.parse(RACK_BASE)) + ((long) racks << rackBits);
        long rackEnd = base + (1L << rackBits);
        if (rackEnd > Integer.toUnsignedLong(Ipv4.parse(RACK_BASE)) + (1L << 24)) {
            throw new IllegalArgumentException("too many racks for the 10.0.0.0/8 addressing plan ("
                    + (racks + 1) + " racks of /" + (32 - rackBits) + ")");
        }
        racks++;
        for (int h = 0; h < hostCount; h++) {
            hosts.add(new Host("host-" + pod + "-" + index + "-" + h, Ipv4.format((int) (base + 1 + h)), tor));
        }
        for (int m = 0; m < smuxCount; m++) {
            String id = "smux-" + smuxes.size();
            smuxes.add(new Smux(id, Ipv4.format((int) (rackEnd - 2 - m)), tor, smuxCapacityBps));
        }
    }

    Topology build(String name) {
        return new Topology(name, switches, links, hosts, smuxes);
    }

    static void require(boolean ok, String field, String reason) {
        if (!ok) {
            throw new IllegalArgumentException(field + ": " + reason);
        }
    }
}
