package org.hybridlb.app.core.rest;

import java.util.Map;
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
    private final HybridlbApi api;

    public StatusResource(HybridlbApi api) {
        this.api = api;
    }

    @GET
    @Path("assignment")
    public Response assignment() {
        return Rest.run(() -> Rest.json(200, api.assignment()));
    }

    @GET
    @Path("migrations")
    public Response migrations() {
        return Rest.run(() -> Rest.json(200, api.migrations()));
    }

    @GET
    @Path("smuxes")
    public Response smuxes() {
        return Rest.run(() -> Rest.json(200, Map.of("smuxes", api.smuxes())));
    }

    @GET
    @Path("stats")
    public Response stats() {
        return Rest.run(() -> Rest.json(200, api.stats()));
    }

    @GET
    @Path("switches")
    public Response switches() {
        return Rest.run(() -> Rest.json(200, Map.of("switches", api.switches())));
    }

    /** Maintenance: the switch's VIPs migrate away without loss; none lands on it until undrained. */
    @POST
    @Path("switches/{id}/drain")
    public Response drain(@PathParam("id") String id) {
        return Rest.run(() -> Rest.json(200, api.setDrained(id, true)));
    }

    @DELETE
    @Path("switches/{id}/drain")
    public Response undrain(@PathParam("id") String id) {
        return Rest.run(() -> Rest.json(200, api.setDrained(id, false)));
    }

    @POST
    @Path("reassign")
    public Response reassign() {
        return Rest.run(() -> Rest.json(200, api.reassignNow()));
    }
}
