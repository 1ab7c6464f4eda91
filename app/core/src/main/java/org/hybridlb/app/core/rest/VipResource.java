package org.hybridlb.app.core.rest;

import java.io.InputStream;
import java.util.Map;
import java.util.function.Supplier;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.hybridlb.app.core.HybridlbApi;

/** VIPs and their DIPs: {@code /vips}, {@code /vips/{vip}}, {@code /vips/{vip}/dips[/{dip}]}. */
@Path("vips")
@Produces(MediaType.APPLICATION_JSON)
public class VipResource {
    /** Asked on every request: it may answer 503 ({@link org.hybridlb.app.core.ApiException}). */
    private final Supplier<HybridlbApi> api;
    private final long maxBodyBytes;

    public VipResource(Supplier<HybridlbApi> api, long maxBodyBytes) {
        this.api = api;
        this.maxBodyBytes = maxBodyBytes;
    }

    @GET
    public Response list() {
        return Rest.run(() -> Rest.json(200, Map.of("vips", api.get().vips())));
    }

    @PUT
    @Consumes(MediaType.APPLICATION_JSON)
    public Response replaceAll(InputStream body) {
        return Rest.run(() -> Rest.json(200, Map.of("vips", api.get().replaceVips(Rest.body(body, maxBodyBytes)))));
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response create(InputStream body) {
        return Rest.run(() -> Rest.json(201, api.get().createVip(Rest.body(body, maxBodyBytes))));
    }

    @GET
    @Path("{vip}")
    public Response get(@PathParam("vip") String vip) {
        return Rest.run(() -> Rest.json(200, api.get().vip(vip)));
    }

    @PUT
    @Path("{vip}")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response replace(@PathParam("vip") String vip, InputStream body) {
        return Rest.run(() -> Rest.json(200, api.get().replaceVip(vip, Rest.body(body, maxBodyBytes))));
    }

    @DELETE
    @Path("{vip}")
    public Response delete(@PathParam("vip") String vip) {
        return Rest.run(() -> {
            api.get().deleteVip(vip);
            return Response.noContent().build();
        });
    }

    @GET
    @Path("{vip}/dips")
    public Response dips(@PathParam("vip") String vip) {
        return Rest.run(() -> Rest.json(200, Map.of("vip", vip, "ports", api.get().vip(vip).ports)));
    }

    @POST
    @Path("{vip}/dips")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response addDip(@PathParam("vip") String vip, InputStream body) {
        return Rest.run(() -> Rest.json(201, api.get().addDip(vip, Rest.body(body, maxBodyBytes))));
    }

    @DELETE
    @Path("{vip}/dips/{dip}")
    public Response removeDip(@PathParam("vip") String vip, @PathParam("dip") String dip,
                              @QueryParam("proto") String proto, @QueryParam("port") String port) {
        return Rest.run(() -> Rest.json(200, api.get().removeDip(vip, dip, proto, Rest.port("port", port, 0))));
    }
}
