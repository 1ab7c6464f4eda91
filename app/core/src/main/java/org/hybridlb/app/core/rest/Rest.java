package org.hybridlb.app.core.rest;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Json;

/**
 * Turns API results and refusals into JAX-RS responses. Bodies are encoded here with the core's
 * Jackson codec, so the resources need no JSON provider from the host runtime (ONOS or the daemon)
 * and both serve byte-identical JSON.
 */
final class Rest {
    private static final Logger LOG = Logger.getLogger(Rest.class.getName());

    private Rest() {
    }

    /**
     * A request body read up to {@code max} bytes; a longer one is refused with 413 before it is
     * parsed (the whole body never sits in memory). Invalid UTF-8 becomes U+FFFD, which the JSON
     * parser then refuses naming the place.
     */
    static String body(InputStream in, long max) {
        byte[] b;
        try {
            b = in.readNBytes((int) Math.min(max + 1, Integer.MAX_VALUE - 16));
        } catch (IOException e) {
            throw ApiException.invalid("/", "the request body could not be read: " + e.getMessage());
        }
        if (b.length > max) {
            throw ApiException.tooLarge(max);
        }
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A port in a query parameter, {@code min}..65535; null when absent. 400 naming {@code field} otherwise. */
    static Integer port(String field, String text, int min) {
        if (text == null) {
            return null;
        }
        int p;
        try {
            p = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw ApiException.invalid(field, "'" + text + "' is not a port number");
        }
        if (p < min || p > 65535) {
            throw ApiException.invalid(field, "must be " + min + ".." + 65535 + ", got " + p);
        }
        return p;
    }

    static Response json(int status, Object body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(Json.write(body) + "\n").build();
    }

    static Response error(ApiException e) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", e.error);
        if (e.field != null) {
            body.put("field", e.field);
        }
        body.put("reason", e.reason);
        Response r = json(e.status, body);
        // unavailable for now (busy, starting, not the leader, the disk): a client may try again
        return e.status == 503 ? Response.fromResponse(r).header("Retry-After", RETRY_AFTER_SECONDS).build() : r;
    }

    /** What a 503 tells the client to wait before trying again. */
    static final String RETRY_AFTER_SECONDS = "1";

    /** Runs a call; refusals become 4xx/503 JSON errors, anything else a 500 JSON error. */
    static Response run(Supplier<Response> call) {
        try {
            return call.get();
        } catch (ApiException e) {
            return error(e);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "REST call failed", e);
            return error(new ApiException(500, "internal error", null, String.valueOf(e.getMessage())));
        }
    }
}
