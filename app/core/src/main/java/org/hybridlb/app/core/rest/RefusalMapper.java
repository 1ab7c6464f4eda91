package org.hybridlb.app.core.rest;

import javax.ws.rs.NotAcceptableException;
import javax.ws.rs.NotAllowedException;
import javax.ws.rs.NotFoundException;
import javax.ws.rs.NotSupportedException;
import javax.ws.rs.WebApplicationException;
import javax.ws.rs.core.Response;
import javax.ws.rs.ext.ExceptionMapper;
import org.hybridlb.app.core.ApiException;

/**
 * What the JAX-RS runtime itself refuses (no such resource, a method the resource does not take,
 * a body that is not JSON) answered like every other refusal: {@code {error, field, reason}} JSON
 * naming what was wrong, with the runtime's status and its {@code Allow} header.
 */
final class RefusalMapper implements ExceptionMapper<WebApplicationException> {
    @Override
    public Response toResponse(WebApplicationException e) {
        Response original = e.getResponse();
        int status = original.getStatus();
        ApiException refusal;
        if (e instanceof NotAllowedException) {
            refusal = new ApiException(status, "method not allowed", "method", "the resource takes "
                    + String.join(", ", new java.util.TreeSet<>(original.getAllowedMethods())));
        } else if (e instanceof NotSupportedException) {
            refusal = new ApiException(status, "unsupported media type", "Content-Type",
                    "the body must be JSON (Content-Type: application/json)");
        } else if (e instanceof NotAcceptableException) {
            refusal = new ApiException(status, "not acceptable", "Accept", "the answer is JSON (application/json)");
        } else if (e instanceof NotFoundException) {
            refusal = new ApiException(status, "not found", "path", "no such resource (GET openapi.json lists them)");
        } else {
            refusal = new ApiException(status, status >= 500 ? "internal error" : "refused", status >= 500 ? null : "/",
                    String.valueOf(e.getMessage()));
        }
        Response r = Rest.error(refusal);
        if (!original.getAllowedMethods().isEmpty()) {
            return Response.fromResponse(r).allow(original.getAllowedMethods()).build();
        }
        return r;
    }
}
