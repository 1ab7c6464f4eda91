package org.hybridlb.solver.topology;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;

/**
 * The production-like Clos of Duet §3.8.1: pods ("containers") of ToRs and aggregation
 * switches joined by a core layer. Paper scale is {@link Params#paperScale()}: 40 pods of
 * 40 ToRs and 4 Aggs, 40 cores, ToR–Agg 10 Gbps, Agg–Core 40 Gbps, free tables 16K host /
 * 4K ECMP / 512 tunnel, and 32 hosts per ToR (51,200 servers; the paper says "50k servers
 * connected to 1600 ToRs").
 *
 * <p>Every ToR links to every Agg of its pod. Agg–Core wiring is {@link Wiring#STRIPED} by
 * default: Agg j of every pod links to core group j (cores j*c/a .. (j+1)*c/a - 1), as in a
 * fat-tree, so at paper scale an Agg has 40 x 10G down and 10 x 40G up (no oversubscription)
 * and each core reaches each pod once. {@link Wiring#FULL} links every Agg to every core.
 */
public final class DuetClos {
    private DuetClos() {
    }

    /** How aggregation switches reach the core layer. */
    public enum Wiring {
        STRIPED, FULL;

        public static Wiring parse(String text) {
            try {
                return valueOf(text.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("wiring: 'striped' or 'full', got '" + text + "'");
            }
        }
    }

    /** Generator options, defaults at paper scale. */
    public static final class Params {
        public String name = "duet-clos";
        public int pods = 40;
        public int torsPerPod = 40;
        public int aggsPerPod = 4;
        public int cores = 40;
        public int hostsPerTor = 32;
        public double torAggBps = 10e9;
        public double aggCoreBps = 40e9;
        public Wiring wiring = Wiring.STRIPED;
        /** Free table entries of every switch unless a per-role value is set. */
        public TableCapacity tables = TableCapacity.DEFAULTS;
        public TableCapacity torTables;
        public TableCapacity aggTables;
        public TableCapacity coreTables;
        /** SMuxes per pod, spread over distinct ToRs (ignored when smuxTors is set). */
        public int smuxesPerPod = 1;
        /** Explicit ToR ids carrying an SMux each (repeat an id for several). */
        public List<String> smuxTors;
        public double smuxBps = FatTree.DEFAULT_SMUX_BPS;

        /** 40 pods x (40 ToRs + 4 Aggs), 40 cores: the §3.8.1 network. */
        public static Params paperScale() {
            return new Params();
        }

        /** A small Clos of the same shape for tests and demos. */
        public static Params small(int pods, int torsPerPod, int aggsPerPod, int cores) {
            Params p = new Params();
            p.pods = pods;
            p.torsPerPod = torsPerPod;
            p.aggsPerPod = aggsPerPod;
            p.cores = cores;
            return p;
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

        public Params wiring(Wiring value) {
            wiring = value;
            return this;
        }

        public Params tables(TableCapacity value) {
            tables = value;
            return this;
        }

        public Params smuxesPerPod(int value) {
            smuxesPerPod = value;
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

        public Params name(String value) {
            name = value;
            return this;
        }
    }

    public static Topology generate(Params p) {
        FabricBuilder.require(p.pods >= 1, "pods", "at least 1, got " + p.pods);
        FabricBuilder.require(p.torsPerPod >= 1, "torsPerPod", "at least 1, got " + p.torsPerPod);
        FabricBuilder.require(p.aggsPerPod >= 1, "aggsPerPod", "at least 1, got " + p.aggsPerPod);
        FabricBuilder.require(p.cores >= 1, "cores", "at least 1, got " + p.cores);
        FabricBuilder.require((long) p.pods * p.torsPerPod <= 100_000, "pods x torsPerPod",
                "at most 100,000 ToRs, got " + (long) p.pods * p.torsPerPod);
        FabricBuilder.require(p.hostsPerTor >= 0 && p.hostsPerTor <= 4000, "hostsPerTor",
                "between 0 and 4000, got " + p.hostsPerTor);
        FabricBuilder.require(p.torAggBps > 0, "torAggBps", "must be positive");
        FabricBuilder.require(p.aggCoreBps > 0, "aggCoreBps", "must be positive");
        FabricBuilder.require(p.smuxBps > 0, "smuxBps", "must be positive");
        FabricBuilder.require(p.tables != null, "tables", "must be given");
        FabricBuilder.require(p.wiring != null, "wiring", "must be given");
        if (p.wiring == Wiring.STRIPED) {
            FabricBuilder.require(p.cores % p.aggsPerPod == 0, "cores",
                    "striped wiring needs cores (" + p.cores + ") to be a multiple of aggsPerPod ("
                            + p.aggsPerPod + "); use wiring 'full' otherwise");
        }
        FabricBuilder.require(p.smuxTors != null || (p.smuxesPerPod >= 0 && p.smuxesPerPod <= p.torsPerPod),
                "smuxesPerPod", "between 0 and torsPerPod (" + p.torsPerPod + "), got " + p.smuxesPerPod);

        Set<String> tors = new HashSet<>();
        for (int pod = 0; pod < p.pods; pod++) {
            for (int t = 0; t < p.torsPerPod; t++) {
                tors.add(FabricBuilder.torId(pod, t));
            }
        }
        List<String> smuxTors = p.smuxTors;
        if (smuxTors == null) {
            smuxTors = new ArrayList<>();
            for (int pod = 0; pod < p.pods; pod++) {
                for (int m = 0; m < p.smuxesPerPod; m++) {
                    // spread evenly so one rack failure takes out at most one SMux per pod
                    smuxTors.add(FabricBuilder.torId(pod, (int) ((long) m * p.torsPerPod / p.smuxesPerPod)));
                }
            }
        }
        Map<String, Integer> smuxPerTor = SmuxPlacement.fromList(smuxTors, tors, "smuxTors");
        TableCapacity torTables = p.torTables != null ? p.torTables : p.tables;
        TableCapacity aggTables = p.aggTables != null ? p.aggTables : p.tables;
        TableCapacity coreTables = p.coreTables != null ? p.coreTables : p.tables;

        FabricBuilder b = new FabricBuilder(p.hostsPerTor + SmuxPlacement.max(smuxPerTor));
        for (int c = 0; c < p.cores; c++) {
            b.addSwitch(FabricBuilder.coreId(c), SwitchRole.CORE, null, coreTables);
        }
        int coresPerAgg = p.wiring == Wiring.STRIPED ? p.cores / p.aggsPerPod : p.cores;
        for (int pod = 0; pod < p.pods; pod++) {
            for (int a = 0; a < p.aggsPerPod; a++) {
                String agg = FabricBuilder.aggId(pod, a);
                b.addSwitch(agg, SwitchRole.AGG, pod, aggTables);
                int first = p.wiring == Wiring.STRIPED ? a * coresPerAgg : 0;
                for (int c = first; c < first + coresPerAgg; c++) {
                    b.addLink(agg, FabricBuilder.coreId(c), p.aggCoreBps);
                }
            }
            for (int t = 0; t < p.torsPerPod; t++) {
                String tor = FabricBuilder.torId(pod, t);
                b.addTor(pod, t, torTables, p.hostsPerTor, smuxPerTor.getOrDefault(tor, 0), p.smuxBps);
                for (int a = 0; a < p.aggsPerPod; a++) {
                    b.addLink(tor, FabricBuilder.aggId(pod, a), p.torAggBps);
                }
            }
        }
        return b.build(p.name);
    }
}
