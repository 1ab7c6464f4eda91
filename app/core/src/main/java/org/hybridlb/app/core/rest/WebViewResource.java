package org.hybridlb.app.core.rest;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.hybridlb.app.core.ApiException;

/**
 * The live web view, {@code GET /ui/}: a page and its script and style, from this jar (no CDN, no
 * library), that polls the REST views beside it ({@code ../assignment}, {@code ../stats}, ...). The
 * files served are the fixed set below, nothing else from the class path.
 */
@Path("ui")
public class WebViewResource {
    static final String ROOT = "/org/hybridlb/app/core/ui/";
    static final String INDEX = "index.html";
    /** File -> content type: everything the page needs. */
    static final Map<String, String> FILES = Map.of(
            INDEX, "text/html; charset=utf-8",
            "hybridlb.js", "text/javascript; charset=utf-8",
            "hybridlb.css", "text/css; charset=utf-8");

    /** {@code /ui} -> {@code /ui/} (the page's relative links need the slash), {@code /ui/} -> the page. */
    @GET
    public Response page(@Context UriInfo uri) {
        if (!uri.getPath().endsWith("/")) {
            return Response.status(Response.Status.MOVED_PERMANENTLY)
                    .location(uri.getAbsolutePathBuilder().path("/").build()).build();
        }
        return file(INDEX);
    }

    @GET
    @Path("{file}")
    public Response file(@PathParam("file") String name) {
        String type = FILES.get(name);
        if (type == null) {
            return Rest.error(ApiException.notFound("file", "the web view has no file " + name + " (it has "
                    + new java.util.TreeSet<>(FILES.keySet()) + ")"));
        }
        try (InputStream in = WebViewResource.class.getResourceAsStream(ROOT + name)) {
            if (in == null) {
                throw new IllegalStateException("web view file " + ROOT + name + " missing from the build");
            }
            return Response.ok(in.readAllBytes()).type(type).header("Cache-Control", "no-cache").build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
