package org.hybridlb.solver.topology;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;

/**
 * The k-ary fat-tree (Al-Fares et al.): k pods of k/2 aggregation and k/2 ToR switches,
 * (k/2)^2 cores. ToR i of a pod links to every agg of its pod; agg j of every pod links to
 * cores j*k/2 .. j*k/2 + k/2 - 1, so each core reaches every pod exactly once.
 * Names and addresses follow {@link FabricBuilder}.
 */
public final class FatTree {
    public static final double DEFAULT_LINK_BPS = 10e9;
    /** SMux capacity observed in production (Duet §3.2: 300K packets/s of 1,500 bytes). */
    public static final double DEFAULT_SMUX_BPS = 3.6e9;

    private FatTree() {
    }

    /** Generator options; every field has the default documented on it. */
    public static final class Params {
        /** Switch radix, even, at least 2. */
        public int k = 4;
        /** Hosts under each ToR; default k/2 (the classic fat-tree) when negative. */
        public int hostsPerTor = -1;
        public double torAggBps = DEFAULT_LINK_BPS;
        public double aggCoreBps = DEFAULT_LINK_BPS;
        /** Free table entries on every switch (Duet defaults 16K/4K/512). */
        public TableCapacity tables = TableCapacity.DEFAULTS;
        /** ToR ids carrying an SMux each (repeat an id for several); null: one on tor-p-0 of every pod. */
        public List<String> smuxTors;
        public double smuxBps = DEFAULT_SMUX_BPS;

        public Params k(int value) {
            k = value;
            return this;
        }

        public Params hostsPerTor(int value) {
            hostsPerTor = value;
            return this;
        }

        public Params linkBps(double torAgg, double aggCore) {
            torAggBps = torAgg;
            aggCoreBps = aggCore;
            return this;
        }

        public Params tables(TableCapacity value) {
            tables = value;
            return this;
        }

        public Params smuxTors(List<String> value) {
            smuxTors = value;
            return this;
        }

        public Params smuxBps(double value) {
            smuxBps = value;
            return this;
        }
    }

    /** The classic k-ary fat-tree with k/2 hosts per ToR and default capacities. */
    public static Topology generate(int k) {
        return generate(new Params().k(k));
    }

    public static Topology generate(Params p) {
        FabricBuilder.require(p.k >= 2 && p.k % 2 == 0, "k", "must be even and at least 2, got " + p.k);
        FabricBuilder.require(p.k <= 128, "k", "at most 128 (that is already 524,288 hosts), got " + p.k);
        int half = p.k / 2;
        int hostsPerTor = p.hostsPerTor < 0 ? half : p.hostsPerTor;
        FabricBuilder.require(hostsPerTor <= 4000, "hostsPerTor", "at most 4000, got " + hostsPerTor);
        FabricBuilder.require(p.torAggBps > 0, "torAggBps", "must be positive");
        FabricBuilder.require(p.aggCoreBps > 0, "aggCoreBps", "must be positive");
        FabricBuilder.require(p.smuxBps > 0, "smuxBps", "must be positive");
        FabricBuilder.require(p.tables != null, "tables", "must be given");

        Set<String> tors = new HashSet<>();
        for (int pod = 0; pod < p.k; pod++) {
            for (int t = 0; t < half; t++) {
                tors.add(FabricBuilder.torId(pod, t));
            }
        }
        List<String> smuxTors = p.smuxTors;
        if (smuxTors == null) {
            smuxTors = new ArrayList<>();
            for (int pod = 0; pod < p.k; pod++) {
                smuxTors.add(FabricBuilder.torId(pod, 0));
            }
        }
        Map<String, Integer> smuxPerTor = SmuxPlacement.fromList(smuxTors, tors, "smuxTors");

        FabricBuilder b = new FabricBuilder(hostsPerTor + SmuxPlacement.max(smuxPerTor));
        for (int c = 0; c < half * half; c++) {
            b.addSwitch(FabricBuilder.coreId(c), SwitchRole.CORE, null, p.tables);
        }
        for (int pod = 0; pod < p.k; pod++) {
            for (int a = 0; a < half; a++) {
                String agg = FabricBuilder.aggId(pod, a);
                b.addSwitch(agg, SwitchRole.AGG, pod, p.tables);
                for (int c = a * half; c < (a + 1) * half; c++) {
                    b.addLink(agg, FabricBuilder.coreId(c), p.aggCoreBps);
                }
            }
            for (int t = 0; t < half; t++) {
                String tor = FabricBuilder.torId(pod, t);
                b.addTor(pod, t, p.tables, hostsPerTor, smuxPerTor.getOrDefault(tor, 0), p.smuxBps);
                for (int a = 0; a < half; a++) {
                    b.addLink(tor, FabricBuilder.aggId(pod, a), p.torAggBps);
                }
            }
        }
        return b.build("fat-tree-k" + p.k);
    }
}
