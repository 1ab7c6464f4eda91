package org.hybridlb.standalone.cli;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.MigrationRecord;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.ControllerCounters;
import org.hybridlb.app.core.view.MigrationsView;
import org.hybridlb.app.core.view.ReassignResult;
import org.hybridlb.app.core.view.SmuxView;
import org.hybridlb.app.core.view.StatsView;
import org.hybridlb.app.core.view.SwitchView;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code hybridlb assignment|reassign|switches|drain|undrain|smuxes|stats|migrations}: the REST
 * answers decoded into the core's views (the types the controller answers with), printed as tables.
 */
final class StatusCommands {
    private StatusCommands() {
    }

    /** A command that sends one request and prints the answer decoded into the core's view {@code T}. */
    abstract static class ViewCmd<T> extends HybridlbCli.Sub {
        private final String method;
        private final TypeReference<T> type;

        ViewCmd(String method, TypeReference<T> type) {
            this.method = method;
            this.type = type;
        }

        /** The request path (with the command's arguments). */
        abstract String path();

        abstract String table(T view);

        @Override
        JsonNode fetch() {
            return cli.call(method, path(), null, 200);
        }

        @Override
        String render(JsonNode n) {
            return table(Json.MAPPER.convertValue(n, type));
        }
    }

    static String rate(double bytesPerSecond) {
        double bits = bytesPerSecond * 8;
        String[] units = {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
        int u = 0;
        while (bits >= 1000 && u < units.length - 1) {
            bits /= 1000;
            u++;
        }
        return String.format(Locale.ROOT, u == 0 ? "%.0f %s" : "%.2f %s", bits, units[u]);
    }

    static String pct(double share) {
        return String.format(Locale.ROOT, "%.1f%%", share * 100);
    }

    static String list(List<String> items) {
        return items.isEmpty() ? "none" : String.join(", ", items);
    }

    static int waves(MigrationRecord m) {
        return m.plan == null ? 0 : m.plan.waves.size();
    }

    @Command(name = "assignment", description = "Where each VIP is (installed) and where the solver wants it (target).")
    static final class AssignmentCmd extends ViewCmd<AssignmentView> {
        AssignmentCmd() {
            super("GET", new TypeReference<AssignmentView>() { });
        }

        @Override
        String path() {
            return "/assignment";
        }

        @Override
        String table(AssignmentView a) {
            Table t = new Table("VIP", "INSTALLED", "TARGET");
            a.installed.forEach((vip, at) -> t.row(vip, at, a.target == null ? "-" : a.target.getOrDefault(vip, "-")));
            StringBuilder b = new StringBuilder(t.size() == 0 ? "no VIPs installed\n" : t.render());
            b.append("algorithm ").append(a.algorithm == null ? "-" : a.algorithm);
            if (a.hmuxTrafficShare != null) {
                b.append(", HMux traffic share ").append(pct(a.hmuxTrafficShare));
            }
            if (a.mru != null) {
                b.append(String.format(Locale.ROOT, ", MRU %.3f", a.mru));
            }
            if (a.smuxCount != null) {
                b.append(", SMuxes needed ").append(a.smuxCount);
            }
            b.append('\n');
            b.append("down switches: ").append(list(a.downSwitches))
                    .append("; drained: ").append(list(a.drainedSwitches))
                    .append("; unhealthy DIPs: ").append(list(a.unhealthyDips))
                    .append("; migrating: ").append(a.migrating ? "yes" : "no").append('\n');
            for (Map.Entry<String, AssignmentView.DipHealth> e : a.dipHealth.entrySet()) {
                b.append("DIP ").append(e.getKey()).append(' ').append(e.getValue().state)
                        .append(": ").append(e.getValue().reason).append('\n');
            }
            if (a.lastError != null) {
                b.append("last error: ").append(a.lastError).append('\n');
            }
            return b.toString();
        }
    }

    @Command(name = "reassign", description = "Re-assign now (sticky algorithm on the last traffic) and start the migration.")
    static final class Reassign extends ViewCmd<ReassignResult> {
        Reassign() {
            super("POST", new TypeReference<ReassignResult>() { });
        }

        @Override
        String path() {
            return "/reassign";
        }

        @Override
        String table(ReassignResult r) {
            MigrationRecord m = r.migration;
            StringBuilder b = new StringBuilder();
            if (m == null) {
                b.append("nothing to migrate\n");
            } else {
                b.append("migration ").append(m.id).append(" ").append(m.state).append(": ")
                        .append(waves(m)).append(" waves (").append(m.trigger).append(")\n");
            }
            if (r.lastError != null) {
                b.append("last error: ").append(r.lastError).append('\n');
            }
            return b.toString();
        }
    }

    @Command(name = "switches", description = "The switches: up, drained, and the VIPs each serves as HMux.")
    static final class Switches extends ViewCmd<Map<String, List<SwitchView>>> {
        Switches() {
            super("GET", new TypeReference<Map<String, List<SwitchView>>>() { });
        }

        @Override
        String path() {
            return "/switches";
        }

        @Override
        String table(Map<String, List<SwitchView>> answer) {
            Table t = new Table("SWITCH", "ROLE", "POD", "UP", "DRAINED", "HMUX VIPS");
            for (SwitchView s : answer.getOrDefault("switches", List.of())) {
                t.row(s.id, s.role, s.pod == null ? "-" : s.pod, s.up ? "yes" : "NO", s.drained ? "yes" : "no",
                        list(s.vips));
            }
            return t.size() == 0 ? "no switches\n" : t.render();
        }
    }

    /** drain / undrain: one switch, printed as a one-line summary. */
    abstract static class DrainBase extends ViewCmd<SwitchView> {
        @Parameters(index = "0", paramLabel = "SWITCH", description = "switch id, e.g. agg-1-0")
        String switchId;

        DrainBase(String method) {
            super(method, new TypeReference<SwitchView>() { });
        }

        @Override
        String path() {
            return "/switches/" + HybridlbCli.enc(switchId) + "/drain";
        }

        @Override
        String table(SwitchView s) {
            return s.id + (s.drained
                    ? ": drained; its VIPs migrate to other HMuxes through the SMuxes (hybridlb migrations)\n"
                    : ": not drained; VIPs may be placed on it again\n");
        }
    }

    @Command(name = "drain", description = "Maintenance: move every VIP off a switch without loss, place none on it.")
    static final class Drain extends DrainBase {
        Drain() {
            super("POST");
        }
    }

    @Command(name = "undrain", description = "End a drain: the switch may serve VIPs again.")
    static final class Undrain extends DrainBase {
        Undrain() {
            super("DELETE");
        }
    }

    @Command(name = "smuxes", description = "The SMuxes: live (announcing to the route server), table version.")
    static final class Smuxes extends ViewCmd<Map<String, List<SmuxView>>> {
        Smuxes() {
            super("GET", new TypeReference<Map<String, List<SmuxView>>>() { });
        }

        @Override
        String path() {
            return "/smuxes";
        }

        @Override
        String table(Map<String, List<SmuxView>> answer) {
            Table t = new Table("SMUX", "IP", "TOR", "LIVE", "TABLE", "VIPS");
            for (SmuxView s : answer.getOrDefault("smuxes", List.of())) {
                t.row(s.id, s.ip, s.tor, s.live ? "yes" : "NO", s.tableVersion, s.vips);
            }
            return t.size() == 0 ? "no SMuxes\n" : t.render();
        }
    }

    @Command(name = "stats", description = "Traffic per VIP and the HMux/SMux split of the last interval.")
    static final class Stats extends ViewCmd<StatsView> {
        Stats() {
            super("GET", new TypeReference<StatsView>() { });
        }

        @Override
        String path() {
            return "/stats";
        }

        @Override
        String table(StatsView s) {
            Table t = new Table("VIP", "RATE", "PLACEMENT");
            for (StatsView.VipRate v : s.vips) {
                t.row(v.vip, rate(v.bytesPerSecond), v.placement);
            }
            StringBuilder b = new StringBuilder(t.size() == 0 ? "no traffic measured\n" : t.render());
            b.append("HMux ").append(rate(s.hmuxBytesPerSecond))
                    .append(", SMux ").append(rate(s.smuxBytesPerSecond))
                    .append(", HMux share ").append(pct(s.hmuxShare)).append('\n');
            ControllerCounters c = s.controller;
            if (c != null) {
                b.append("controller: ").append(c.reconciles).append(" reconciles, ")
                        .append(c.wavesApplied).append(" waves, ")
                        .append(c.rollbacks).append(" rollbacks, ")
                        .append(c.failovers).append(" failovers, ")
                        .append(c.repairs).append(" repairs, last reconcile ")
                        .append(String.format(Locale.ROOT, "%.1f ms", c.lastReconcileMillis)).append('\n');
            }
            return b.toString();
        }
    }

    @Command(name = "migrations", description = "The migration in flight and the recent ones.")
    static final class Migrations extends ViewCmd<MigrationsView> {
        Migrations() {
            super("GET", new TypeReference<MigrationsView>() { });
        }

        @Override
        String path() {
            return "/migrations";
        }

        @Override
        String table(MigrationsView v) {
            Table t = new Table("ID", "STATE", "WAVES", "STARTED", "TOOK", "TRIGGER", "ERROR");
            if (v.inFlight != null) {
                row(t, v.inFlight);
            }
            v.recent.forEach(m -> row(t, m));
            return t.size() == 0 ? "no migrations\n" : t.render();
        }

        private static void row(Table t, MigrationRecord m) {
            long start = m.startedMillis;
            t.row(m.id, m.state, m.nextWave + "/" + waves(m), start == 0 ? "-" : Instant.ofEpochMilli(start).toString(),
                    m.endedMillis != null ? (m.endedMillis - start) + " ms" : "-", m.trigger, m.error);
        }
    }
}
