package org.hybridlb.app.core.rest;

import java.util.Map;
import java.util.function.Supplier;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.hybridlb.app.core.HybridlbApi;

/**
 * The Prism hand-off controller: front ends, backends and connections of the Prism VIPs. A VIP's
 * Prism configuration itself (front ends, backends, rules) is part of the VIP ({@code /vips}).
 */
@Path("prism")
@Produces(MediaType.APPLICATION_JSON)
public class PrismResource {
    private final Supplier<HybridlbApi> api;

    public PrismResource(Supplier<HybridlbApi> api) {
        this.api = api;
    }

    @GET
    public Response vips() {
        return Rest.run(() -> Rest.json(200, Map.of("vips", api.get().prismVips())));
    }

    @GET
    @Path("{vip}")
    public Response vip(@PathParam("vip") String vip) {
        return Rest.run(() -> Rest.json(200, api.get().prismVip(vip)));
    }

    @GET
    @Path("{vip}/connections")
    public Response connections(@PathParam("vip") String vip) {
        return Rest.run(() -> Rest.json(200, Map.of("connections", api.get().prismConnections(vip))));
    }
}
