package org.hybridlb.solver.model;

import java.util.ArrayList;
import java.util.List;

/**
 * WCMP by replication, the one rule of what a service's weights become on the data path: the
 * weights are reduced by their greatest common divisor, and a DIP of reduced weight {@code u}
 * is {@code u} equal buckets ("units"). A DIP of weight 0 is drained: no unit, so no new flow
 * and no HMux entry; the SMuxes keep it in the pool at weight 0 for the connections they pinned
 * to it. The memory model counts the units as ECMP entries (ASSIGNMENT.md), the controller builds
 * one bucket per unit (app/core {@code BucketIds}), and {@link Limits#MAX_WCMP_UNITS_PER_SERVICE}
 * bounds what one service's pool holds on the SMuxes.
 *
 * <p>Units are what makes every selection mode proportional: OVS's {@code selection_method=hash}
 * takes the bucket with the highest {@code hash(bucket) x weight}, which does not split in
 * proportion to the weights (1:2:1 gives about 70/15/15), but over equal buckets it is a uniform
 * draw; OVS's {@code dp_hash}, CRC32 slots and P4 action-selector members split equal buckets
 * evenly too.
 */
public final class Wcmp {
    private Wcmp() {
    }

    /** Each DIP's units, in the order of {@code dips}: weight / gcd of the non-zero weights; 0 when drained. */
    public static int[] units(List<Dip> dips) {
        int g = 0;
        for (Dip d : dips) {
            g = gcd(g, d.weight);
        }
        int[] out = new int[dips.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = g == 0 ? 0 : dips.get(i).weight / g;
        }
        return out;
    }

    /** The units of the whole pool: its ECMP entries on an HMux. */
    public static long totalUnits(List<Dip> dips) {
        long sum = 0;
        for (int u : units(dips)) {
            sum += u;
        }
        return sum;
    }

    /** Buckets of the pool on an SMux: one per unit, and one of weight 0 per drained DIP. */
    public static long smuxBuckets(List<Dip> dips) {
        long n = totalUnits(dips);
        for (Dip d : dips) {
            if (d.weight == 0) {
                n++;
            }
        }
        return n;
    }

    /** The same service with each DIP's weight replaced by its units (the same split, the smallest weights). */
    public static VipPort reduced(VipPort p) {
        int[] u = units(p.dips);
        boolean same = true;
        for (int i = 0; i < u.length; i++) {
            same &= u[i] == p.dips.get(i).weight;
        }
        if (same) {
            return p;
        }
        List<Dip> dips = new ArrayList<>(p.dips.size());
        for (int i = 0; i < u.length; i++) {
            Dip d = p.dips.get(i);
            dips.add(new Dip(d.ip, u[i], d.hostIp));
        }
        return new VipPort(p.proto, p.port, dips);
    }

    /** The VIP with every service {@link #reduced(VipPort)} (the same object when nothing changes). */
    public static Vip reduced(Vip v) {
        List<VipPort> ports = new ArrayList<>(v.ports.size());
        boolean same = true;
        for (VipPort p : v.ports) {
            VipPort r = reduced(p);
            same &= r == p;
            ports.add(r);
        }
        return same ? v : v.withPorts(ports);
    }

    private static int gcd(int a, int b) {
        while (b != 0) {
            int t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
