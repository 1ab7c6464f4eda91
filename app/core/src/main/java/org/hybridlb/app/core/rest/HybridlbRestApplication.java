package org.hybridlb.app.core.rest;

import java.util.Set;
import java.util.function.Supplier;
import javax.ws.rs.core.Application;
import org.hybridlb.app.core.Controller;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.metrics.ControllerMetrics;

/**
 * The REST API as a JAX-RS application of resource instances: the northbound, the controller's
 * metrics ({@code /metrics}) and the live web view ({@code /ui/}). The daemon binds it to its one
 * controller; the ONOS app subclasses it with suppliers that look its service up on every request
 * (the service may come and go while the web bundle stays) and answer 503 while there is none.
 */
public class HybridlbRestApplication extends Application {
    private final Set<Object> resources;

    /** The daemon's: its controller and the metrics it reports to. */
    public HybridlbRestApplication(Controller controller) {
        this(() -> controller, controller::metrics);
    }

    /** An API without metrics ({@code /metrics} answers 503). */
    public HybridlbRestApplication(HybridlbApi api) {
        this(() -> api, () -> null);
    }

    /**
     * {@code api} and {@code metrics} are asked on every request; an
     * {@link org.hybridlb.app.core.ApiException} they throw is the answer.
     */
    public HybridlbRestApplication(Supplier<HybridlbApi> api, Supplier<ControllerMetrics> metrics) {
        this.resources = Set.of(new VipResource(api), new StatusResource(api), new MetricsResource(metrics),
                new WebViewResource());
    }

    @Override
    public Set<Object> getSingletons() {
        return resources;
    }
}
