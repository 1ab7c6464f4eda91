package org.hybridlb.app.core.rest;

import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;

/** {@code GET /openapi.json}: the API's OpenAPI 3.1 description ({@link OpenApi}). */
@Path("openapi.json")
public class OpenApiResource {
    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response get() {
        return Response.ok(OpenApi.text(), MediaType.APPLICATION_JSON_TYPE).build();
    }
}
