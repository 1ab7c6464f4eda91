package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.topology.DuetTestbed;
import org.hybridlb.solver.topology.FatTree;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code topology fat-tree|duet-clos|testbed}: writes a generated fabric as topology JSON. */
@Command(name = "topology",
        header = "Generate a fabric: fat-tree, Duet Clos or the Duet testbed.",
        description = "Generate a data-center fabric as topology JSON (switches, links, hosts, SMuxes).%n"
                + "Names: core-<i>, agg-<pod>-<i>, tor-<pod>-<i>, host-<pod>-<tor>-<h>, smux-<i>.%n"
                + "Addresses: each ToR owns a rack subnet (/26 or larger) carved in order from 10.0.0.0/8;"
                + " hosts take .1, .2, ..., SMuxes the top addresses of the rack.",
        mixinStandardHelpOptions = true,
        subcommands = {
            TopologyCommand.FatTreeCommand.class,
            TopologyCommand.ClosCommand.class,
            TopologyCommand.TestbedCommand.class,
        })
public final class TopologyCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new IllegalArgumentException("topology: choose a kind: fat-tree, duet-clos or testbed"
                + " (see 'hybridlb-solver topology --help')");
    }

    /** Options every kind shares: output, table sizes, SMuxes. */
    static final class Common {
        @Option(names = "--out", paramLabel = "FILE",
                description = "Write the topology here (default: standard output).")
        Path out;

        @Option(names = "--host-table", paramLabel = "N",
                description = "Free host-table entries per switch (VIP /32 routes; default ${DEFAULT-VALUE}).",
                defaultValue = "" + TableCapacity.DEFAULT_HOST)
        int hostTable;

        @Option(names = "--ecmp-table", paramLabel = "N",
                description = "Free ECMP-table entries per switch (one per DIP, WCMP repeats; default ${DEFAULT-VALUE}).",
                defaultValue = "" + TableCapacity.DEFAULT_ECMP)
        int ecmpTable;

        @Option(names = "--tunnel-table", paramLabel = "N",
                description = "Free tunnel-table entries per switch (one per encapsulation target; default ${DEFAULT-VALUE}).",
                defaultValue = "" + TableCapacity.DEFAULT_TUNNEL)
        int tunnelTable;

        @Option(names = "--smux-gbps", paramLabel = "GBPS",
                description = "Capacity of each SMux in Gbit/s (default ${DEFAULT-VALUE}: 300K packets/s of 1,500 bytes, Duet §3.2).",
                defaultValue = "3.6")
        double smuxGbps;

        @Option(names = "--smux-tor", paramLabel = "TOR", split = ",",
                description = "Put an SMux on this ToR (repeatable or comma-separated; repeat an id for several SMuxes on one ToR). "
                        + "Replaces the kind's default placement.")
        List<String> smuxTors;

        TableCapacity tables() {
            requireNonNegative(hostTable, "--host-table");
            requireNonNegative(ecmpTable, "--ecmp-table");
            requireNonNegative(tunnelTable, "--tunnel-table");
            return new TableCapacity(hostTable, ecmpTable, tunnelTable);
        }

        double smuxBps() {
            requirePositive(smuxGbps, "--smux-gbps");
            return smuxGbps * 1e9;
        }

        int emit(Topology t, CommandSpec spec) {
            ModelChecks.checkTopology(t, "generated topology");
            if (out == null) {
                JsonOutput.print(spec.commandLine().getOut(), t);
            } else {
                JsonOutput.write(out, t, true, "--out");
            }
            PrintWriter err = spec.commandLine().getErr();
            Map<String, Integer> roles = new TreeMap<>();
            for (Switch s : t.switches) {
                roles.merge(s.role.json(), 1, Integer::sum);
            }
            err.printf("%s: %d switches %s, %d links, %d hosts, %d SMuxes%s%n", t.name, t.switches.size(), roles,
                    t.links.size(), t.hosts.size(), t.smuxes.size(), out == null ? "" : " -> " + out);
            err.flush();
            return SolverCli.EXIT_OK;
        }
    }

    @Command(name = "fat-tree", mixinStandardHelpOptions = true,
            description = "k-ary fat-tree: k pods of k/2 Aggs and k/2 ToRs, (k/2)^2 cores; Agg j of each pod "
                    + "links to cores j*k/2 .. j*k/2+k/2-1. Default SMuxes: one on tor-<p>-0 of every pod.")
    static final class FatTreeCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Common common = new Common();

        @Option(names = "--k", paramLabel = "K", description = "Switch radix, even (default ${DEFAULT-VALUE}).",
                defaultValue = "4")
        int k;

        @Option(names = "--hosts-per-tor", paramLabel = "N", description = "Hosts under each ToR (default k/2).")
        Integer hostsPerTor;

        @Option(names = "--tor-agg-gbps", paramLabel = "GBPS", description = "ToR-Agg links in Gbit/s "
                + "(default ${DEFAULT-VALUE}).", defaultValue = "10")
        double torAggGbps;

        @Option(names = "--agg-core-gbps", paramLabel = "GBPS", description = "Agg-Core links in Gbit/s "
                + "(default ${DEFAULT-VALUE}).", defaultValue = "10")
        double aggCoreGbps;

        @Override
        public Integer call() {
            requirePositive(torAggGbps, "--tor-agg-gbps");
            requirePositive(aggCoreGbps, "--agg-core-gbps");
            FatTree.Params p = new FatTree.Params().k(k).linkBps(torAggGbps * 1e9, aggCoreGbps * 1e9)
                    .tables(common.tables()).smuxBps(common.smuxBps()).smuxTors(common.smuxTors);
            if (hostsPerTor != null) {
                requireNonNegative(hostsPerTor, "--hosts-per-tor");
                p.hostsPerTor(hostsPerTor);
            }
            return common.emit(generate(() -> FatTree.generate(p)), spec);
        }
    }

    @Command(name = "duet-clos", mixinStandardHelpOptions = true,
            description = "The production-like Clos of Duet §3.8.1. Defaults are paper scale: 40 pods of 40 ToRs and "
                    + "4 Aggs, 40 cores, 32 hosts per ToR (51,200 servers), ToR-Agg 10G, Agg-Core 40G, one SMux per pod.")
    static final class ClosCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Common common = new Common();

        @Option(names = "--pods", paramLabel = "N", description = "Pods (containers) (default ${DEFAULT-VALUE}).",
                defaultValue = "40")
        int pods;

        @Option(names = "--tors-per-pod", paramLabel = "N", description = "ToRs per pod (default ${DEFAULT-VALUE}).",
                defaultValue = "40")
        int torsPerPod;

        @Option(names = "--aggs-per-pod", paramLabel = "N", description = "Aggs per pod (default ${DEFAULT-VALUE}).",
                defaultValue = "4")
        int aggsPerPod;

        @Option(names = "--cores", paramLabel = "N", description = "Core switches (default ${DEFAULT-VALUE}).",
                defaultValue = "40")
        int cores;

        @Option(names = "--hosts-per-tor", paramLabel = "N", description = "Hosts under each ToR (default ${DEFAULT-VALUE}).",
                defaultValue = "32")
        int hostsPerTor;

        @Option(names = "--tor-agg-gbps", paramLabel = "GBPS", description = "ToR-Agg links (default ${DEFAULT-VALUE}).",
                defaultValue = "10")
        double torAggGbps;

        @Option(names = "--agg-core-gbps", paramLabel = "GBPS", description = "Agg-Core links (default ${DEFAULT-VALUE}).",
                defaultValue = "40")
        double aggCoreGbps;

        @Option(names = "--wiring", paramLabel = "W", defaultValue = "striped",
                description = "Agg-Core wiring: 'striped' (Agg j of each pod to core group j, like a fat-tree; needs cores "
                        + "to be a multiple of aggs per pod) or 'full' (every Agg to every core). Default ${DEFAULT-VALUE}.")
        String wiring;

        @Option(names = "--smuxes-per-pod", paramLabel = "N", defaultValue = "1",
                description = "SMuxes per pod, spread over distinct ToRs (default ${DEFAULT-VALUE}; ignored with --smux-tor).")
        int smuxesPerPod;

        @Override
        public Integer call() {
            requirePositive(torAggGbps, "--tor-agg-gbps");
            requirePositive(aggCoreGbps, "--agg-core-gbps");
            DuetClos.Params p = DuetClos.Params.small(pods, torsPerPod, aggsPerPod, cores)
                    .hostsPerTor(hostsPerTor)
                    .linkBps(torAggGbps * 1e9, aggCoreGbps * 1e9)
                    .wiring(DuetClos.Wiring.parse(wiring))
                    .tables(common.tables())
                    .smuxesPerPod(smuxesPerPod)
                    .smuxTors(common.smuxTors)
                    .smuxBps(common.smuxBps());
            return common.emit(generate(() -> DuetClos.generate(p)), spec);
        }
    }

    @Command(name = "testbed", mixinStandardHelpOptions = true,
            description = "The Duet testbed of Fig. 3.10: 2 containers of 2 Aggs + 2 ToRs, 2 cores (every Agg to both), "
                    + "15 hosts per ToR, 10G links, SMuxes on ToRs 1-3 (tor-0-0, tor-0-1, tor-1-0).")
    static final class TestbedCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Common common = new Common();

        @Override
        public Integer call() {
            DuetClos.Params p = DuetTestbed.params().tables(common.tables()).smuxBps(common.smuxBps());
            if (common.smuxTors != null) {
                p.smuxTors(common.smuxTors);
            }
            return common.emit(generate(() -> DuetClos.generate(p)), spec);
        }
    }

    /** Generator argument errors name the generator's field; the CLI says which option that is. */
    private static Topology generate(java.util.function.Supplier<Topology> generator) {
        try {
            return generator.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(optionNames(e.getMessage()), e);
        }
    }

    private static String optionNames(String message) {
        String[][] names = {
            {"pods x torsPerPod", "--pods x --tors-per-pod"}, {"torsPerPod", "--tors-per-pod"}, {"aggsPerPod", "--aggs-per-pod"}, {"hostsPerTor", "--hosts-per-tor"},
            {"smuxesPerPod", "--smuxes-per-pod"}, {"smuxTors", "--smux-tor"}, {"pods", "--pods"},
            {"cores", "--cores"}, {"k", "--k"}, {"wiring", "--wiring"},
        };
        for (String[] n : names) {
            if (message.startsWith(n[0] + ":") || message.startsWith(n[0] + " ")) {
                return n[1] + message.substring(n[0].length());
            }
        }
        return message;
    }

    static void requirePositive(double value, String option) {
        if (!(value > 0)) {
            throw new IllegalArgumentException(option + ": must be positive, got " + value);
        }
    }

    static void requireNonNegative(long value, String option) {
        if (value < 0) {
            throw new IllegalArgumentException(option + ": must not be negative, got " + value);
        }
    }
}
