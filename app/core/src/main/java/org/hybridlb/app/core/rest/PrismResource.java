package org.hybridlb.app.core.rest;

import java.io.InputStream;
import java.util.Map;
import java.util.function.Supplier;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.HybridlbApi;

/**
 * The Prism hand-off controller: front ends, backends and connections of the Prism VIPs. A VIP's
 * Prism configuration itself (front ends, backends, rules) is part of the VIP ({@code /vips}).
 * {@code /prism/{vip}/pins}: the fabric steering pins of a VIP with {@code steering: fabric}, which
 * its front ends install at each hand-off and remove when the connection comes back.
 */
@Path("prism")
@Produces(MediaType.APPLICATION_JSON)
public class PrismResource {
    private final Supplier<HybridlbApi> api;
    private final long maxBodyBytes;

    public PrismResource(Supplier<HybridlbApi> api, long maxBodyBytes) {
        this.api = api;
        this.maxBodyBytes = maxBodyBytes;
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

    @GET
    @Path("{vip}/pins")
    public Response pins(@PathParam("vip") String vip) {
        return Rest.run(() -> Rest.json(200, Map.of("pins", api.get().prismPins(vip))));
    }

    /** Answers once the fabric acknowledged the pin: the front end lets its backend serve only then. */
    @POST
    @Path("{vip}/pins")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response pin(@PathParam("vip") String vip, InputStream body) {
        return Rest.run(() -> Rest.json(200, api.get().prismPin(vip, Rest.body(body, maxBodyBytes))));
    }

    @DELETE
    @Path("{vip}/pins")
    public Response unpin(@PathParam("vip") String vip, @QueryParam("client") String client,
                          @QueryParam("clientPort") String clientPort, @QueryParam("vipPort") String vipPort) {
        return Rest.run(() -> {
            if (client == null) {
                throw ApiException.invalid("client", "required: the client's address");
            }
            boolean removed = api.get().prismUnpin(vip, client, port("clientPort", clientPort),
                    port("vipPort", vipPort));
            return Rest.json(200, Map.of("removed", removed));
        });
    }

    private static int port(String field, String text) {
        Integer p = Rest.port(field, text, 1);
        if (p == null) {
            throw ApiException.invalid(field, "required: a port 1..65535");
        }
        return p;
    }
}
