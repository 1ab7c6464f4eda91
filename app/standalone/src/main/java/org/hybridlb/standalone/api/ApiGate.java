package org.hybridlb.standalone.api;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.logging.Logger;
import org.hybridlb.app.core.Json;

/**
 * What every request to hybridlbd passes before any handler (the REST resources and whatever
 * else the daemon serves): the token and its role (401 without or with an unknown token, 403 for
 * a viewer's write), the declared body size (413; the REST resources also stop reading at the same
 * size, for bodies sent without a length), and the number of requests in progress (503 with
 * {@code Retry-After} beyond it). Refusals are the API's JSON errors; every write is logged with
 * the token's name and its status. The web view's own files ({@code GET /ui/...}: a page, a script
 * and a style sheet from the jar, no data) need no token: the page asks the API with the token it
 * is given in its address ({@code /ui/#token=...}, a fragment the browser never sends).
 */
final class ApiGate extends Filter {
    private static final Logger LOG = Logger.getLogger(ApiGate.class.getName());
    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");
    static final String RETRY_AFTER_SECONDS = "1";

    private final Tokens tokens;
    private final long maxBodyBytes;
    private final int maxConcurrent;
    private final Semaphore inProgress;

    ApiGate(Tokens tokens, long maxBodyBytes, int maxConcurrent) {
        this.tokens = tokens;
        this.maxBodyBytes = maxBodyBytes;
        this.maxConcurrent = maxConcurrent;
        this.inProgress = new Semaphore(maxConcurrent);
    }

    @Override
    public String description() {
        return "hybridlbd: tokens, body size, requests in progress";
    }

    @Override
    public void doFilter(HttpExchange ex, Chain chain) throws IOException {
        String method = ex.getRequestMethod().toUpperCase(Locale.ROOT);
        boolean write = !READS.contains(method);
        String who = "anyone (no token file)";
        if (tokens != null && !(READS.contains(method) && isWebViewFile(ex.getRequestURI().getPath()))) {
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            if (auth == null || !auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
                ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"hybridlbd\"");
                refuse(ex, 401, "unauthorized", "Authorization", "a token is required (Authorization: Bearer <token>)");
                audit(ex, write, "no token");
                return;
            }
            Tokens.Entry e = tokens.check(auth.substring(7).trim());
            if (e == null) {
                ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"hybridlbd\", error=\"invalid_token\"");
                refuse(ex, 401, "unauthorized", "Authorization", "unknown or revoked token");
                audit(ex, true, "an unknown token");
                return;
            }
            if (write && e.role != Tokens.Role.ADMIN) {
                refuse(ex, 403, "forbidden", "Authorization", "token '" + e.name + "' is a " + e.role.json()
                        + " token: it may only read; writes need an admin token");
                audit(ex, true, e.name + " (" + e.role.json() + ")");
                return;
            }
            who = e.name + " (" + e.role.json() + ")";
        }
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        if (length != null && declaredTooLong(length)) {
            refuse(ex, 413, "payload too large", "/", "the request body is larger than " + maxBodyBytes
                    + " bytes, this server's limit");
            return;
        }
        if (!inProgress.tryAcquire()) {
            ex.getResponseHeaders().set("Retry-After", RETRY_AFTER_SECONDS);
            refuse(ex, 503, "unavailable", null, maxConcurrent + " requests are in progress, this server's limit; "
                    + "retry after " + RETRY_AFTER_SECONDS + " s");
            return;
        }
        try {
            chain.doFilter(ex);
        } finally {
            inProgress.release();
            audit(ex, write, who);
        }
    }

    /**
     * The web view's static files (served by {@code WebViewResource}), which hold no data: {@code /ui},
     * {@code /ui/} or one file name under it. Nothing with another segment ({@code /ui/../vips}) passes.
     */
    static boolean isWebViewFile(String path) {
        return WEB_VIEW_FILE.matcher(path).matches();
    }

    private static final java.util.regex.Pattern WEB_VIEW_FILE =
            java.util.regex.Pattern.compile("/ui(/([a-z][a-z0-9-]*\\.[a-z]+)?)?");

    /** One line per write (and per refused token): who, from where, the answer. */
    private static void audit(HttpExchange ex, boolean log, String who) {
        if (log) {
            LOG.info(ex.getRequestMethod() + " " + ex.getRequestURI() + " by " + who + " from "
                    + ex.getRemoteAddress().getAddress().getHostAddress() + ": " + ex.getResponseCode());
        }
    }

    private boolean declaredTooLong(String length) {
        try {
            return Long.parseLong(length.trim()) > maxBodyBytes;
        } catch (NumberFormatException e) {
            return false;   // the HTTP server refuses a malformed length itself
        }
    }

    /** Answers {@code {error, field, reason}} and closes the exchange; the body is not read. */
    static void refuse(HttpExchange ex, int status, String error, String field, String reason) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        if (field != null) {
            body.put("field", field);
        }
        body.put("reason", reason);
        byte[] b = (Json.write(body) + "\n").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        if ("HEAD".equalsIgnoreCase(ex.getRequestMethod())) {
            ex.sendResponseHeaders(status, -1);
        } else {
            ex.sendResponseHeaders(status, b.length);
            ex.getResponseBody().write(b);
        }
        ex.close();
    }
}
