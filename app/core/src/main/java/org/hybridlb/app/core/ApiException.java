package org.hybridlb.app.core;

import org.hybridlb.solver.io.InvalidInputException;

/**
 * A request the controller refuses, with the HTTP status it maps to and the body
 * {@code {"error": ..., "field": ..., "reason": ...}}. Nothing has changed when it is thrown.
 */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public final int status;
    public final String error;
    public final String field;
    public final String reason;

    public ApiException(int status, String error, String field, String reason) {
        super(error + (field != null ? " " + field : "") + ": " + reason);
        this.status = status;
        this.error = error;
        this.field = field;
        this.reason = reason;
    }

    public static ApiException invalid(String field, String reason) {
        return new ApiException(400, "invalid request", field, reason);
    }

    public static ApiException invalid(InvalidInputException e) {
        return invalid(e.field() == null || e.field().isEmpty() ? "/" : e.field(), e.reason());
    }

    public static ApiException notFound(String field, String reason) {
        return new ApiException(404, "not found", field, reason);
    }

    public static ApiException conflict(String field, String reason) {
        return new ApiException(409, "conflict", field, reason);
    }

    /** 413: the body is longer than the runtime accepts ({@code maxBodyBytes}). */
    public static ApiException tooLarge(long maxBodyBytes) {
        return new ApiException(413, "payload too large", "/", "the request body is larger than " + maxBodyBytes
                + " bytes, this server's limit");
    }

    public static ApiException unavailable(String reason) {
        return new ApiException(503, "unavailable", null, reason);
    }
}
