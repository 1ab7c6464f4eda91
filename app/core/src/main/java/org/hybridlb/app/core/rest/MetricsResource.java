package org.hybridlb.app.core.rest;

import java.util.function.Supplier;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.StreamingOutput;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.metrics.ControllerMetrics;

/** {@code GET /metrics}: the controller's metrics in Prometheus text format, for Prometheus to scrape. */
@Path("metrics")
public class MetricsResource {
    private final Supplier<ControllerMetrics> metrics;

    public MetricsResource(Supplier<ControllerMetrics> metrics) {
        this.metrics = metrics;
    }

    @GET
    public Response scrape() {
        return Rest.run(() -> {
            ControllerMetrics m = metrics.get();
            if (m == null) {
                throw ApiException.unavailable("no controller metrics here");
            }
            StreamingOutput body = m::writeTo;
            return Response.ok(body).type(m.contentType()).build();
        });
    }
}
