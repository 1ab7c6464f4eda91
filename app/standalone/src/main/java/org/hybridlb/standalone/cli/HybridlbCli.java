package org.hybridlb.standalone.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.concurrent.Callable;
import org.hybridlb.app.core.tls.TlsFiles;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code hybridlb}: the command-line client of hybridlbd's REST API. Tables for people,
 * {@code --json} for scripts; a refused request prints the server's {@code error}, {@code field}
 * and {@code reason} and exits 1 (3 when the daemon cannot be reached).
 */
@Command(name = "hybridlb", mixinStandardHelpOptions = true,
        description = "Client of the hybridlbd REST API.",
        subcommands = {VipCommands.Vips.class, VipCommands.VipCmd.class, VipCommands.DipCmd.class,
            StatusCommands.AssignmentCmd.class, StatusCommands.Reassign.class, StatusCommands.Smuxes.class,
            StatusCommands.Stats.class, StatusCommands.Migrations.class, StatusCommands.Switches.class,
            StatusCommands.Drain.class, StatusCommands.Undrain.class, PrismCommands.PrismCmd.class,
            TokenCommands.TokenCmd.class})
public final class HybridlbCli implements Callable<Integer> {
    public static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--url", description = "daemon base URL (default: $HYBRIDLB_URL or ${DEFAULT-VALUE})",
            defaultValue = "${env:HYBRIDLB_URL:-http://127.0.0.1:8080}")
    String url;

    @Option(names = "--json", description = "print the raw JSON answer")
    boolean json;

    @Option(names = "--timeout", description = "seconds to wait for an answer", defaultValue = "35")
    int timeoutSeconds;

    @Option(names = "--ca", description = "CA certificate (PEM) of hybridlbd's HTTPS certificate (default: $HYBRIDLB_CA; "
            + "without it, the JDK's CAs)", defaultValue = "${env:HYBRIDLB_CA}")
    Path ca;

    @Option(names = "--token-file", description = "file whose first line is the API token (default: "
            + "$HYBRIDLB_TOKEN_FILE; or the token itself in $HYBRIDLB_TOKEN)", defaultValue = "${env:HYBRIDLB_TOKEN_FILE}")
    Path tokenFile;

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
        HttpClient.Builder hb = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if (ca != null) {
            try {
                hb.sslContext(TlsFiles.context(null, TlsFiles.trust(ca)));
            } catch (IllegalArgumentException e) {
                throw new Failure(2, "hybridlb: --ca: " + e.getMessage());
            }
        }
        HttpClient http = hb.build();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + path))
                .timeout(Duration.ofSeconds(timeoutSeconds));
        String token = token();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
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

    /** The token of --token-file, else of $HYBRIDLB_TOKEN; null: none. */
    private String token() {
        if (tokenFile != null) {
            try {
                String t = Files.readString(tokenFile).lines().findFirst().orElse("").strip();
                if (t.isEmpty()) {
                    throw new Failure(2, "hybridlb: --token-file: " + tokenFile + " is empty");
                }
                return t;
            } catch (IOException e) {
                throw new Failure(2, "hybridlb: --token-file: cannot read " + tokenFile + ": " + e.getMessage());
            }
        }
        String t = System.getenv("HYBRIDLB_TOKEN");
        return t == null || t.isBlank() ? null : t.strip();
    }

    /** A command that only groups subcommands ({@code vip}, {@code dip}): alone, it prints its usage. */
    abstract static class Group implements Callable<Integer> {
        @ParentCommand
        HybridlbCli cli;

        @Override
        public Integer call() {
            new CommandLine(this).usage(cli.out);
            return 2;
        }
    }

    /** Shared body of every subcommand: call, then print the server's JSON ({@code --json}) or a table. */
    abstract static class Sub implements Callable<Integer> {
        @ParentCommand
        Object parent;

        HybridlbCli cli;

        @Override
        public Integer call() {
            cli = parent instanceof HybridlbCli ? (HybridlbCli) parent : ((Group) parent).cli;
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
}
