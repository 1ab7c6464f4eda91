package org.hybridlb.app.core.rest;

import java.util.Set;
import java.util.function.Supplier;
import javax.ws.rs.core.Application;
import org.hybridlb.app.core.Controller;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.metrics.ControllerMetrics;

/**
 * The REST API as a JAX-RS application of resource instances: the northbound, the controller's
 * metrics ({@code /metrics}), the live web view ({@code /ui/}) and its description
 * ({@code GET /openapi.json}, {@link OpenApi}). The daemon binds it to its one controller; the ONOS
 * app subclasses it with suppliers that look its service up on every request (the service may come
 * and go while the web bundle stays) and answer 503 while there is none.
 */
public class HybridlbRestApplication extends Application {
    /**
     * The longest request body taken by default (413 beyond); hybridlbd's config may change it
     * ({@code limits.maxBodyBytes}; docs/operating.md gives the size of large configurations).
     */
    public static final long DEFAULT_MAX_BODY_BYTES = 16L << 20;

    private final Set<Object> resources;

    /** The daemon's: its controller and the metrics it reports to. */
    public HybridlbRestApplication(Controller controller) {
        this(controller, DEFAULT_MAX_BODY_BYTES);
    }

    /** The daemon's, with its request body limit. */
    public HybridlbRestApplication(Controller controller, long maxBodyBytes) {
        this(() -> controller, controller::metrics, maxBodyBytes);
    }

    /** An API without metrics ({@code /metrics} answers 503). */
    public HybridlbRestApplication(HybridlbApi api) {
        this(() -> api, () -> null, DEFAULT_MAX_BODY_BYTES);
    }

    /**
     * {@code api} and {@code metrics} are asked on every request; an
     * {@link org.hybridlb.app.core.ApiException} they throw is the answer. {@code maxBodyBytes}:
     * longer request bodies are refused with 413 before they are parsed.
     */
    public HybridlbRestApplication(Supplier<HybridlbApi> api, Supplier<ControllerMetrics> metrics, long maxBodyBytes) {
        this.resources = Set.of(new VipResource(api, maxBodyBytes), new StatusResource(api), new PrismResource(api, maxBodyBytes),
                new OpenApiResource(),
                new RefusalMapper(), new MetricsResource(metrics), new WebViewResource());
    }

    @Override
    public Set<Object> getSingletons() {
        return resources;
    }
}
