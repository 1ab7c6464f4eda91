package org.hybridlb.standalone;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import javax.net.ssl.SSLContext;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.standalone.api.Tokens;

/** The daemon's config file (app/standalone/README.md "Config file"), validated as a whole. */
public final class DaemonConfig {
    static final ObjectMapper STRICT = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .build();

    public final Path file;
    public final Path fabric;
    public final Path vips;
    public final Path stateDir;
    public final InetSocketAddress listen;
    public final String algorithm;
    public final String smuxEncap;
    public final Duration reconcileInterval;
    public final Duration statsInterval;
    public final Duration routesInterval;
    public final Duration topologyInterval;
    public final Duration healthInterval;
    /** Longest a VIP whose pool grew waits on the SMuxes for its diverging connections to end. */
    public final Duration poolGrowthHoldMax;
    /** The periodic reconcile reads every switch back at most this often (events always do). */
    public final Duration repairInterval;
    /** How long the SMuxes pin a VIP's connections hashing as the HMux it left for one of another hash contract. */
    public final Duration contractPin;
    public final long commandTimeoutMillis;
    public final long httpTimeoutMillis;
    public final Access access;

    /** Who may call the REST API, over what, and how much (docs/operating.md, "Security model"). */
    public static final class Access {
        /** HTTPS with the identity of {@code tls.keystore}; null: plain HTTP (loopback only). */
        public final SSLContext serverTls;
        /**
         * The management plane's client (SMuxes, host agents): that identity as client certificate,
         * their certificates checked against {@code tls.ca} (the JDK's CAs without it); null: no tls.
         */
        public final SSLContext clientTls;
        /** Null: no authentication (loopback only). */
        public final Tokens tokens;
        public final long maxBodyBytes;
        public final int maxConcurrentRequests;

        Access(SSLContext serverTls, SSLContext clientTls, Tokens tokens, long maxBodyBytes, int maxConcurrentRequests) {
            this.serverTls = serverTls;
            this.clientTls = clientTls;
            this.tokens = tokens;
            this.maxBodyBytes = maxBodyBytes;
            this.maxConcurrentRequests = maxConcurrentRequests;
        }
    }

    /** Requests in progress at once, by default (503 with Retry-After beyond). */
    public static final int DEFAULT_MAX_CONCURRENT_REQUESTS = 16;

    private DaemonConfig(Path file, Path fabric, Path vips, Path stateDir, InetSocketAddress listen, String algorithm,
                         String smuxEncap, long[] ms, long commandTimeoutMillis, long httpTimeoutMillis, Access access) {
        this.file = file;
        this.fabric = fabric;
        this.vips = vips;
        this.stateDir = stateDir;
        this.listen = listen;
        this.algorithm = algorithm;
        this.smuxEncap = smuxEncap;
        this.reconcileInterval = Duration.ofMillis(ms[0]);
        this.statsInterval = Duration.ofMillis(ms[1]);
        this.routesInterval = Duration.ofMillis(ms[2]);
        this.topologyInterval = Duration.ofMillis(ms[3]);
        this.healthInterval = Duration.ofMillis(ms[4]);
        this.poolGrowthHoldMax = Duration.ofMillis(ms[5]);
        this.repairInterval = Duration.ofMillis(ms[6]);
        this.contractPin = Duration.ofMillis(ms[7]);
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.httpTimeoutMillis = httpTimeoutMillis;
        this.access = access;
    }

    /** Reads and validates {@code file}; every problem is reported at once in a {@link ConfigException}. */
    public static DaemonConfig load(Path file) {
        String name = file.toString();
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new ConfigException(java.util.List.of(name + ": /: cannot read: " + e.getMessage()));
        }
        return parse(text, file);
    }

    static DaemonConfig parse(String text, Path file) {
        String name = file.toString();
        Checker c = new Checker(name);
        JsonNode root;
        try {
            root = STRICT.readTree(text);
        } catch (JsonProcessingException e) {
            c.problem("", "malformed JSON: " + e.getOriginalMessage() + " (line " + e.getLocation().getLineNr() + ")");
            throw new ConfigException(java.util.List.of(name + ": /: malformed JSON: " + e.getOriginalMessage()
                    + " (line " + e.getLocation().getLineNr() + ")"));
        }
        if (root == null || !root.isObject()) {
            c.problem("", "must be a JSON object");
            c.throwIfAny();
        }
        Path dir = file.toAbsolutePath().getParent();
        c.onlyKnown(root, "", Set.of("fabric", "vips", "stateDir", "listen", "algorithm", "smuxEncap",
                "intervals", "timeouts", "tls", "tokens", "limits"));
        String fabric = c.string(root, "fabric", "", null, true);
        Path fabricPath = null;
        if (fabric != null) {
            fabricPath = dir.resolve(fabric).normalize();
            if (!Files.isReadable(fabricPath)) {
                c.problem("/fabric", "no readable file at " + fabricPath);
            }
        }
        String vips = c.string(root, "vips", "", null, false);
        Path vipsPath = null;
        if (vips != null) {
            vipsPath = dir.resolve(vips).normalize();
            if (!Files.isReadable(vipsPath)) {
                c.problem("/vips", "no readable file at " + vipsPath);
            }
        }
        Path stateDir = dir.resolve(c.string(root, "stateDir", "", "state", false)).normalize();
        if (Files.exists(stateDir) && !Files.isDirectory(stateDir)) {
            c.problem("/stateDir", stateDir + " exists and is not a directory");
        }
        InetSocketAddress listen = parseListen(c, c.string(root, "listen", "", "127.0.0.1:8080", false));
        String algorithm = c.string(root, "algorithm", "", "sticky", false);
        String unavailable = algorithm == null ? null : Algorithms.unavailable(algorithm);
        if (unavailable != null) {
            c.problem("/algorithm", unavailable);
        }
        String encap = c.string(root, "smuxEncap", "", "gre", false);
        if (!"gre".equals(encap) && !"ipip".equals(encap)) {
            c.problem("/smuxEncap", "must be \"gre\" or \"ipip\", got \"" + encap + "\"");
        }
        JsonNode iv = c.object(root, "intervals", "", false);
        c.onlyKnown(iv, "/intervals", Set.of("reconcileMs", "statsMs", "routesMs", "topologyMs", "healthMs",
                "poolGrowthHoldMaxMs", "repairMs", "contractPinMs"));
        long day = 86_400_000L;
        long[] ms = {
            c.integer(iv, "reconcileMs", "/intervals", 10_000, 0, day),
            c.integer(iv, "statsMs", "/intervals", 1_000, 10, day),
            c.integer(iv, "routesMs", "/intervals", 200, 10, day),
            c.integer(iv, "topologyMs", "/intervals", 100, 10, day),
            c.integer(iv, "healthMs", "/intervals", 500, 10, day),
            c.integer(iv, "poolGrowthHoldMaxMs", "/intervals", 600_000, 0, day),
            c.integer(iv, "repairMs", "/intervals", 30_000, 0, day),
            c.integer(iv, "contractPinMs", "/intervals", 10_000, 0, day),
        };
        JsonNode to = c.object(root, "timeouts", "", false);
        c.onlyKnown(to, "/timeouts", Set.of("commandMs", "httpMs"));
        long cmd = c.integer(to, "commandMs", "/timeouts", 5_000, 100, 600_000);
        long http = c.integer(to, "httpMs", "/timeouts", 2_000, 50, 600_000);
        Access access = access(c, root, dir);
        checkExposure(c, listen, access, "/listen");
        c.throwIfAny();
        return new DaemonConfig(file, fabricPath, vipsPath, stateDir, listen, algorithm, encap, ms, cmd, http, access);
    }

    private static Access access(Checker c, JsonNode root, Path dir) {
        JsonNode tls = c.object(root, "tls", "", false);
        c.onlyKnown(tls, "/tls", Set.of("keystore", "passwordFile", "ca"));
        SSLContext server = null;
        SSLContext client = null;
        if (tls != null) {
            String ks = c.string(tls, "keystore", "/tls", null, true);
            String pw = c.string(tls, "passwordFile", "/tls", null, true);
            String ca = c.string(tls, "ca", "/tls", null, false);
            javax.net.ssl.KeyManager[] keys = null;
            javax.net.ssl.TrustManager[] trust = null;
            if (ks != null && pw != null) {
                try {
                    keys = TlsFiles.identity(dir.resolve(ks).normalize(), dir.resolve(pw).normalize());
                } catch (IllegalArgumentException e) {
                    c.problem("/tls/keystore", e.getMessage());
                }
            }
            if (ca != null) {
                try {
                    trust = TlsFiles.trust(dir.resolve(ca).normalize());
                } catch (IllegalArgumentException e) {
                    c.problem("/tls/ca", e.getMessage());
                }
            }
            if (keys != null) {
                server = TlsFiles.context(keys, null);
                client = TlsFiles.context(keys, trust);
            }
        }
        Tokens tokens = null;
        String tf = c.string(root, "tokens", "", null, false);
        if (tf != null) {
            try {
                tokens = Tokens.load(dir.resolve(tf).normalize());
            } catch (IllegalArgumentException e) {
                c.problem("/tokens", e.getMessage());
            }
        }
        JsonNode lim = c.object(root, "limits", "", false);
        c.onlyKnown(lim, "/limits", Set.of("maxBodyBytes", "maxConcurrentRequests"));
        long body = c.integer(lim, "maxBodyBytes", "/limits", HybridlbRestApplication.DEFAULT_MAX_BODY_BYTES, 1024,
                1L << 30);
        long conc = c.integer(lim, "maxConcurrentRequests", "/limits", DEFAULT_MAX_CONCURRENT_REQUESTS, 1, 1024);
        return new Access(server, client, tokens, body, (int) conc);
    }

    /**
     * Anything unauthenticated stays on loopback: another address needs both TLS (the tokens would
     * cross the network in clear) and tokens.
     */
    private static void checkExposure(Checker c, InetSocketAddress listen, Access a, String at) {
        if (listen == null) {
            return;
        }
        if (listen.isUnresolved()) {
            c.problem(at, "cannot resolve " + listen.getHostString());
            return;
        }
        if (listen.getAddress().isLoopbackAddress()) {
            return;
        }
        if (a.serverTls == null || a.tokens == null) {
            c.problem(at, listen.getHostString() + " is not a loopback address: hybridlbd serves other hosts only "
                    + "with TLS and tokens (set " + (a.serverTls == null ? "tls" : "") + (a.serverTls == null
                    && a.tokens == null ? " and " : "") + (a.tokens == null ? "tokens" : "")
                    + "; docs/operating.md, \"Security model\")");
        }
    }

    private static InetSocketAddress parseListen(Checker c, String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0) {
            c.problem("/listen", "must be host:port, got \"" + s + "\"");
            return null;
        }
        String host = s.substring(0, colon);
        try {
            int port = Integer.parseInt(s.substring(colon + 1));
            if (port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(host, port);
        } catch (NumberFormatException e) {
            c.problem("/listen", "port of \"" + s + "\" must be 0 to 65535");
            return null;
        }
    }

    /** The same config listening on {@code listen} (command-line override). */
    public static DaemonConfig withListen(DaemonConfig c, String listen) {
        Checker ch = new Checker("--listen");
        InetSocketAddress a = parseListen(ch, listen);
        checkExposure(ch, a, c.access, "");
        ch.throwIfAny();
        long[] ms = {c.reconcileInterval.toMillis(), c.statsInterval.toMillis(), c.routesInterval.toMillis(),
            c.topologyInterval.toMillis(), c.healthInterval.toMillis(), c.poolGrowthHoldMax.toMillis(),
            c.repairInterval.toMillis(), c.contractPin.toMillis()};
        return new DaemonConfig(c.file, c.fabric, c.vips, c.stateDir, a, c.algorithm, c.smuxEncap, ms,
                c.commandTimeoutMillis, c.httpTimeoutMillis, c.access);
    }
}
