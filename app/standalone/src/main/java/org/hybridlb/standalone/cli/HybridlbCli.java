package org.hybridlb.standalone.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code hybridlb}: the command-line client of hybridlbd's REST API. Tables for people,
 * {@code --json} for scripts; a refused request prints the server's {@code error}, {@code field}
 * and {@code reason} and exits 1 (3 when the daemon cannot be reached).
 */
@Command(name = "hybridlb", mixinStandardHelpOptions = true,
        description = "Client of the hybridlbd REST API.",
        subcommands = {HybridlbCli.Vips.class, HybridlbCli.VipCmd.class, HybridlbCli.DipCmd.class,
            HybridlbCli.AssignmentCmd.class, HybridlbCli.Reassign.class, HybridlbCli.Smuxes.class,
            HybridlbCli.Stats.class, HybridlbCli.Migrations.class, HybridlbCli.Switches.class,
            HybridlbCli.Drain.class, HybridlbCli.Undrain.class})
public final class HybridlbCli implements Callable<Integer> {
    public static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--url", description = "daemon base URL (default: $HYBRIDLB_URL or ${DEFAULT-VALUE})",
            defaultValue = "${env:HYBRIDLB_URL:-http://127.0.0.1:8080}")
    String url;

    @Option(names = "--json", description = "print the raw JSON answer")
    boolean json;

    @Option(names = "--timeout", description = "seconds to wait for an answer", defaultValue = "35")
    int timeoutSeconds;

    PrintWriter out;
    PrintWriter err;

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the CLI with the given streams (tests). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        HybridlbCli cli = new HybridlbCli();
        cli.out = out;
        cli.err = err;
        CommandLine cl = new CommandLine(cli);
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    @Override
    public Integer call() {
        new CommandLine(this).usage(out);
        return 2;
    }

    /** The daemon refused or could not be reached: message already built. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int exit;

        Failure(int exit, String message) {
            super(message);
            this.exit = exit;
        }
    }

    JsonNode call(String method, String path, String body, int... ok) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + path))
                .timeout(Duration.ofSeconds(timeoutSeconds));
        HttpRequest.BodyPublisher p = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body);
        b.method(method, p);
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        HttpResponse<String> r;
        try {
            r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new Failure(3, "hybridlb: cannot reach hybridlbd at " + url + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure(3, "hybridlb: interrupted");
        }
        JsonNode node = null;
        if (!r.body().isBlank()) {
            try {
                node = JSON.readTree(r.body());
            } catch (IOException e) {
                throw new Failure(1, "hybridlb: HTTP " + r.statusCode() + ", not JSON: " + r.body().strip());
            }
        }
        for (int code : ok) {
            if (code == r.statusCode()) {
                return node;
            }
        }
        StringBuilder m = new StringBuilder("hybridlb: HTTP " + r.statusCode());
        if (node != null && node.has("error")) {
            m.append(" ").append(node.get("error").asText());
            if (node.has("field")) {
                m.append("\n  field:  ").append(node.get("field").asText());
            }
            if (node.has("reason")) {
                m.append("\n  reason: ").append(node.get("reason").asText());
            }
        } else if (node != null) {
            m.append(" ").append(node);
        }
        throw new Failure(1, m.toString());
    }

    /** Shared body of every subcommand: call, then print JSON or a table. */
    abstract static class Sub implements Callable<Integer> {
        @ParentCommand
        Object parent;

        HybridlbCli cli;

        @Override
        public Integer call() {
            cli = parent instanceof HybridlbCli ? (HybridlbCli) parent
                    : parent instanceof VipCmd ? ((VipCmd) parent).cli : ((DipCmd) parent).cli;
            try {
                JsonNode n = fetch();
                if (cli.json) {
                    cli.out.println(n == null ? "" : JSON.writerWithDefaultPrettyPrinter().writeValueAsString(n));
                } else {
                    cli.out.print(render(n));
                }
                cli.out.flush();
                return 0;
            } catch (Failure f) {
                cli.err.println(f.getMessage());
                cli.err.flush();
                return f.exit;
            } catch (IOException e) {
                cli.err.println("hybridlb: " + e.getMessage());
                return 1;
            }
        }

        abstract JsonNode fetch() throws IOException;

        abstract String render(JsonNode n);
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String services(JsonNode vip) {
        StringBuilder b = new StringBuilder();
        for (JsonNode p : vip.path("ports")) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(p.path("proto").asText()).append('/').append(p.path("port").asInt())
                    .append(':').append(p.path("dips").size());
        }
        return b.toString();
    }

    static String dips(JsonNode vip) {
        java.util.Set<String> ips = new java.util.LinkedHashSet<>();
        for (JsonNode p : vip.path("ports")) {
            for (JsonNode d : p.path("dips")) {
                int w = d.path("weight").asInt(1);
                ips.add(d.path("ip").asText() + (w != 1 ? "*" + w : ""));
            }
        }
        return String.join(",", ips);
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

    static String vipTable(JsonNode vips) {
        Table t = new Table("VIP", "AGGREGATE", "SERVICES (proto/port:DIPs)", "DIPS");
        for (JsonNode v : vips) {
            t.row(v.path("vip").asText(), v.path("aggregate").asText(null), services(v), dips(v));
        }
        return t.size() == 0 ? "no VIPs\n" : t.render();
    }

    // ------------------------------------------------------------------ commands

    @Command(name = "vips", description = "List the configured VIPs.")
    static final class Vips extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/vips", null, 200);
        }

        @Override
        String render(JsonNode n) {
            return vipTable(n.path("vips"));
        }
    }

    @Command(name = "vip", description = "Show, add or remove a VIP.",
            subcommands = {VipShow.class, VipAdd.class, VipRm.class, VipLoad.class})
    static final class VipCmd implements Callable<Integer> {
        @ParentCommand
        HybridlbCli cli;

        @Override
        public Integer call() {
            new CommandLine(this).usage(cli.out);
            return 2;
        }
    }

    abstract static class VipSub extends Sub {
    }

    @Command(name = "show", description = "Show one VIP with its DIPs.")
    static final class VipShow extends VipSub {
        @Parameters(index = "0", description = "the VIP address")
        String vip;

        @Override
        JsonNode fetch() {
            return cli.call("GET", "/vips/" + enc(vip), null, 200);
        }

        @Override
        String render(JsonNode v) {
            Table t = new Table("SERVICE", "DIP", "WEIGHT", "HOST");
            for (JsonNode p : v.path("ports")) {
                for (JsonNode d : p.path("dips")) {
                    t.row(p.path("proto").asText() + "/" + p.path("port").asInt(), d.path("ip").asText(),
                            d.path("weight").asInt(1), d.path("hostIp").asText(null));
                }
            }
            return "VIP " + v.path("vip").asText() + " (aggregate " + v.path("aggregate").asText("-") + ")\n" + t.render();
        }
    }

    @Command(name = "add", description = "Add a VIP: hybridlb vip add 10.100.0.1 --aggregate 10.100.0.0/16 "
            + "--service tcp/80 --dip 10.0.0.2 --dip 10.0.0.3*2 (or --file vip.json).")
    static final class VipAdd extends VipSub {
        @Parameters(index = "0", arity = "0..1", description = "the VIP address")
        String vip;

        @Option(names = "--aggregate", description = "the aggregate prefix the SMuxes announce")
        String aggregate;

        @Option(names = "--service", description = "proto/port (tcp/80, udp/53, any/0); default any/0",
                defaultValue = "any/0")
        String service;

        @Option(names = "--dip", description = "DIP address, optionally *weight or @hostIp (repeat)")
        List<String> dips;

        @Option(names = "--file", description = "the VIP as JSON (solver schema); replaces the other options")
        Path file;

        @Override
        JsonNode fetch() throws IOException {
            String body;
            if (file != null) {
                body = Files.readString(file);
            } else {
                if (vip == null || aggregate == null || dips == null) {
                    throw new Failure(2, "hybridlb: vip add needs VIP, --aggregate and at least one --dip (or --file)");
                }
                ObjectNode v = JSON.createObjectNode();
                v.put("vip", vip);
                v.put("aggregate", aggregate);
                ObjectNode port = v.putArray("ports").addObject();
                String[] pp = service.split("/");
                port.put("proto", pp[0]);
                try {
                    port.put("port", pp.length > 1 ? Integer.parseInt(pp[1]) : 0);
                } catch (NumberFormatException e) {
                    throw new Failure(2, "hybridlb: --service must be proto/port, got " + service);
                }
                ArrayNode ds = port.putArray("dips");
                for (String d : dips) {
                    ds.add(dipNode(d));
                }
                body = JSON.writeValueAsString(v);
            }
            return cli.call("POST", "/vips", body, 201);
        }

        @Override
        String render(JsonNode n) {
            return "added VIP " + n.path("vip").asText() + "\n" + vipTable(JSON.createArrayNode().add(n));
        }
    }

    static ObjectNode dipNode(String spec) {
        String s = spec;
        String hostIp = null;
        Integer weight = null;
        int at = s.indexOf('@');
        if (at >= 0) {
            hostIp = s.substring(at + 1);
            s = s.substring(0, at);
        }
        int star = s.indexOf('*');
        if (star >= 0) {
            try {
                weight = Integer.parseInt(s.substring(star + 1));
            } catch (NumberFormatException e) {
                throw new Failure(2, "hybridlb: DIP weight must be an integer in " + spec);
            }
            s = s.substring(0, star);
        }
        ObjectNode d = JSON.createObjectNode().put("ip", s);
        if (weight != null) {
            d.put("weight", weight);
        }
        if (hostIp != null) {
            d.put("hostIp", hostIp);
        }
        return d;
    }

    @Command(name = "rm", description = "Remove a VIP.")
    static final class VipRm extends VipSub {
        @Parameters(index = "0", description = "the VIP address")
        String vip;

        @Override
        JsonNode fetch() {
            cli.call("DELETE", "/vips/" + enc(vip), null, 204, 200);
            return JSON.createObjectNode().put("removed", vip);
        }

        @Override
        String render(JsonNode n) {
            return "removed VIP " + vip + "\n";
        }
    }

    @Command(name = "load", description = "Replace the whole configuration with a VIP file ({\"vips\": [...]}).")
    static final class VipLoad extends VipSub {
        @Parameters(index = "0", description = "the VIP file")
        Path file;

        @Override
        JsonNode fetch() throws IOException {
            return cli.call("PUT", "/vips", Files.readString(file), 200);
        }

        @Override
        String render(JsonNode n) {
            return "configuration replaced: " + n.path("vips").size() + " VIPs\n";
        }
    }

    @Command(name = "dip", description = "Add or remove a DIP of a VIP.", subcommands = {DipAdd.class, DipRm.class})
    static final class DipCmd implements Callable<Integer> {
        @ParentCommand
        HybridlbCli cli;

        @Override
        public Integer call() {
            new CommandLine(this).usage(cli.out);
            return 2;
        }
    }

    abstract static class DipSub extends Sub {
        @Parameters(index = "0", description = "the VIP address")
        String vip;

        @Parameters(index = "1", description = "the DIP address")
        String dip;

        @Option(names = "--service", description = "proto/port of the service (default: every service)")
        String service;

        @Override
        String render(JsonNode n) {
            return vipTable(JSON.createArrayNode().add(n));
        }
    }

    @Command(name = "add", description = "Add a DIP to a VIP (through the SMuxes when the VIP is on an HMux).")
    static final class DipAdd extends DipSub {
        @Option(names = "--weight", description = "bucket weight")
        Integer weight;

        @Option(names = "--host-ip", description = "tunnel endpoint when the DIP is not a host address")
        String hostIp;

        @Override
        JsonNode fetch() throws IOException {
            ObjectNode d = JSON.createObjectNode().put("ip", dip);
            if (weight != null) {
                d.put("weight", weight);
            }
            if (hostIp != null) {
                d.put("hostIp", hostIp);
            }
            if (service != null) {
                String[] pp = service.split("/");
                d.put("proto", pp[0]);
                if (pp.length > 1) {
                    try {
                        d.put("port", Integer.parseInt(pp[1]));
                    } catch (NumberFormatException e) {
                        throw new Failure(2, "hybridlb: --service must be proto/port, got " + service);
                    }
                }
            }
            return cli.call("POST", "/vips/" + enc(vip) + "/dips", JSON.writeValueAsString(d), 201);
        }
    }

    @Command(name = "rm", description = "Remove a DIP from a VIP.")
    static final class DipRm extends DipSub {
        @Override
        JsonNode fetch() {
            String q = "";
            if (service != null) {
                String[] pp = service.split("/");
                q = "?proto=" + enc(pp[0]) + (pp.length > 1 ? "&port=" + enc(pp[1]) : "");
            }
            return cli.call("DELETE", "/vips/" + enc(vip) + "/dips/" + enc(dip) + q, null, 200);
        }
    }

    @Command(name = "assignment", description = "Where each VIP is (installed) and where the solver wants it (target).")
    static final class AssignmentCmd extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/assignment", null, 200);
        }

        @Override
        String render(JsonNode n) {
            Table t = new Table("VIP", "INSTALLED", "TARGET");
            JsonNode target = n.path("target");
            for (Iterator<Map.Entry<String, JsonNode>> it = n.path("installed").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                t.row(e.getKey(), e.getValue().asText(), target.path(e.getKey()).asText("-"));
            }
            StringBuilder b = new StringBuilder(t.size() == 0 ? "no VIPs installed\n" : t.render());
            b.append("algorithm ").append(n.path("algorithm").asText("-"));
            if (n.has("hmuxTrafficShare")) {
                b.append(", HMux traffic share ").append(pct(n.path("hmuxTrafficShare").asDouble()));
            }
            if (n.has("mru")) {
                b.append(String.format(Locale.ROOT, ", MRU %.3f", n.path("mru").asDouble()));
            }
            if (n.has("smuxCount")) {
                b.append(", SMuxes needed ").append(n.path("smuxCount").asInt());
            }
            b.append('\n');
            b.append("down switches: ").append(list(n.path("downSwitches")))
                    .append("; drained: ").append(list(n.path("drainedSwitches")))
                    .append("; unhealthy DIPs: ").append(list(n.path("unhealthyDips")))
                    .append("; migrating: ").append(n.path("migrating").asBoolean() ? "yes" : "no").append('\n');
            for (Iterator<Map.Entry<String, JsonNode>> it = n.path("dipHealth").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                b.append("DIP ").append(e.getKey()).append(' ').append(e.getValue().path("state").asText())
                        .append(": ").append(e.getValue().path("reason").asText()).append('\n');
            }
            if (n.has("lastError")) {
                b.append("last error: ").append(n.path("lastError").asText()).append('\n');
            }
            return b.toString();
        }
    }

    static String list(JsonNode arr) {
        if (arr == null || arr.size() == 0) {
            return "none";
        }
        StringBuilder b = new StringBuilder();
        for (JsonNode x : arr) {
            b.append(b.length() > 0 ? ", " : "").append(x.asText());
        }
        return b.toString();
    }

    @Command(name = "reassign", description = "Re-assign now (sticky algorithm on the last traffic) and start the migration.")
    static final class Reassign extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("POST", "/reassign", null, 200);
        }

        @Override
        String render(JsonNode n) {
            JsonNode m = n.path("migration");
            StringBuilder b = new StringBuilder();
            if (m.isMissingNode() || m.isNull()) {
                b.append("nothing to migrate\n");
            } else {
                b.append("migration ").append(m.path("id").asLong()).append(" ").append(m.path("state").asText())
                        .append(": ").append(m.path("plan").path("waves").size()).append(" waves (")
                        .append(m.path("trigger").asText()).append(")\n");
            }
            if (n.has("lastError")) {
                b.append("last error: ").append(n.path("lastError").asText()).append('\n');
            }
            return b.toString();
        }
    }

    @Command(name = "switches", description = "The switches: up, drained, and the VIPs each serves as HMux.")
    static final class Switches extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/switches", null, 200);
        }

        @Override
        String render(JsonNode n) {
            Table t = new Table("SWITCH", "ROLE", "POD", "UP", "DRAINED", "HMUX VIPS");
            for (JsonNode s : n.path("switches")) {
                t.row(s.path("id").asText(), s.path("role").asText(), s.path("pod").isNull() ? "-" : s.path("pod").asText(),
                        s.path("up").asBoolean() ? "yes" : "NO", s.path("drained").asBoolean() ? "yes" : "no",
                        list(s.path("vips")));
            }
            return t.size() == 0 ? "no switches\n" : t.render();
        }
    }

    /** drain / undrain: one switch, printed as a one-line summary. */
    abstract static class DrainBase extends Sub {
        @Parameters(index = "0", paramLabel = "SWITCH", description = "switch id, e.g. agg-1-0")
        String switchId;

        @Override
        String render(JsonNode s) {
            return s.path("id").asText() + (s.path("drained").asBoolean()
                    ? ": drained; its VIPs migrate to other HMuxes through the SMuxes (hybridlb migrations)\n"
                    : ": not drained; VIPs may be placed on it again\n");
        }
    }

    @Command(name = "drain", description = "Maintenance: move every VIP off a switch without loss, place none on it.")
    static final class Drain extends DrainBase {
        @Override
        JsonNode fetch() {
            return cli.call("POST", "/switches/" + enc(switchId) + "/drain", null, 200);
        }
    }

    @Command(name = "undrain", description = "End a drain: the switch may serve VIPs again.")
    static final class Undrain extends DrainBase {
        @Override
        JsonNode fetch() {
            return cli.call("DELETE", "/switches/" + enc(switchId) + "/drain", null, 200);
        }
    }

    @Command(name = "smuxes", description = "The SMuxes: live (announcing to the route server), table version.")
    static final class Smuxes extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/smuxes", null, 200);
        }

        @Override
        String render(JsonNode n) {
            Table t = new Table("SMUX", "IP", "TOR", "LIVE", "TABLE", "VIPS");
            for (JsonNode s : n.path("smuxes")) {
                t.row(s.path("id").asText(), s.path("ip").asText(), s.path("tor").asText(),
                        s.path("live").asBoolean() ? "yes" : "NO", s.path("tableVersion").asLong(), s.path("vips").asInt());
            }
            return t.size() == 0 ? "no SMuxes\n" : t.render();
        }
    }

    @Command(name = "stats", description = "Traffic per VIP and the HMux/SMux split of the last interval.")
    static final class Stats extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/stats", null, 200);
        }

        @Override
        String render(JsonNode n) {
            Table t = new Table("VIP", "RATE", "PLACEMENT");
            for (JsonNode v : n.path("vips")) {
                t.row(v.path("vip").asText(), rate(v.path("bytesPerSecond").asDouble()), v.path("placement").asText());
            }
            StringBuilder b = new StringBuilder(t.size() == 0 ? "no traffic measured\n" : t.render());
            b.append("HMux ").append(rate(n.path("hmuxBytesPerSecond").asDouble()))
                    .append(", SMux ").append(rate(n.path("smuxBytesPerSecond").asDouble()))
                    .append(", HMux share ").append(pct(n.path("hmuxShare").asDouble())).append('\n');
            JsonNode c = n.path("controller");
            if (!c.isMissingNode()) {
                b.append("controller: ").append(c.path("reconciles").asLong()).append(" reconciles, ")
                        .append(c.path("wavesApplied").asLong()).append(" waves, ")
                        .append(c.path("rollbacks").asLong()).append(" rollbacks, ")
                        .append(c.path("failovers").asLong()).append(" failovers, ")
                        .append(c.path("repairs").asLong()).append(" repairs, last reconcile ")
                        .append(String.format(Locale.ROOT, "%.1f ms", c.path("lastReconcileMillis").asDouble())).append('\n');
            }
            return b.toString();
        }
    }

    @Command(name = "migrations", description = "The migration in flight and the recent ones.")
    static final class Migrations extends Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/migrations", null, 200);
        }

        @Override
        String render(JsonNode n) {
            Table t = new Table("ID", "STATE", "WAVES", "STARTED", "TOOK", "TRIGGER", "ERROR");
            JsonNode in = n.path("inFlight");
            if (!in.isNull() && !in.isMissingNode()) {
                row(t, in);
            }
            for (JsonNode m : n.path("recent")) {
                row(t, m);
            }
            return t.size() == 0 ? "no migrations\n" : t.render();
        }

        private static void row(Table t, JsonNode m) {
            long start = m.path("startedMillis").asLong();
            JsonNode end = m.path("endedMillis");
            t.row(m.path("id").asLong(), m.path("state").asText(),
                    m.path("nextWave").asInt() + "/" + m.path("plan").path("waves").size(),
                    start == 0 ? "-" : Instant.ofEpochMilli(start).toString(),
                    end.isNumber() ? (end.asLong() - start) + " ms" : "-",
                    m.path("trigger").asText(), m.path("error").asText(null));
        }
    }
}
