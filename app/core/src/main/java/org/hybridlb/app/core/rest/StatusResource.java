package org.hybridlb.app.core.rest;

import java.util.Map;
import java.util.function.Supplier;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.hybridlb.app.core.HybridlbApi;

/** Where VIPs live, migrations, SMuxes, statistics and "reassign now". */
@Path("")
@Produces(MediaType.APPLICATION_JSON)
public class StatusResource {
    /** Asked on every request: it may answer 503 ({@link org.hybridlb.app.core.ApiException}). */
    private final Supplier<HybridlbApi> api;

    public StatusResource(Supplier<HybridlbApi> api) {
        this.api = api;
    }

    @GET
    @Path("assignment")
    public Response assignment() {
        return Rest.run(() -> Rest.json(200, api.get().assignment()));
    }

    @GET
    @Path("migrations")
    public Response migrations() {
        return Rest.run(() -> Rest.json(200, api.get().migrations()));
    }

    @GET
    @Path("smuxes")
    public Response smuxes() {
        return Rest.run(() -> Rest.json(200, Map.of("smuxes", api.get().smuxes())));
    }

    @GET
    @Path("stats")
    public Response stats() {
        return Rest.run(() -> Rest.json(200, api.get().stats()));
    }

    @GET
    @Path("topology")
    public Response topology() {
        return Rest.run(() -> Rest.json(200, api.get().topology()));
    }

    @GET
    @Path("switches")
    public Response switches() {
        return Rest.run(() -> Rest.json(200, Map.of("switches", api.get().switches())));
    }

    /** Maintenance: the switch's VIPs migrate away without loss; none lands on it until undrained. */
    @POST
    @Path("switches/{id}/drain")
    public Response drain(@PathParam("id") String id) {
        return Rest.run(() -> Rest.json(200, api.get().setDrained(id, true)));
    }

    @DELETE
    @Path("switches/{id}/drain")
    public Response undrain(@PathParam("id") String id) {
        return Rest.run(() -> Rest.json(200, api.get().setDrained(id, false)));
    }

    @POST
    @Path("reassign")
    public Response reassign() {
        return Rest.run(() -> Rest.json(200, api.get().reassignNow()));
    }
}
