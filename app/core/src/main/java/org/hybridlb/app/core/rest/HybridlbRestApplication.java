package org.hybridlb.app.core.rest;

import java.util.Set;
import java.util.function.Supplier;
import javax.ws.rs.core.Application;
import org.hybridlb.app.core.HybridlbApi;

/**
 * The REST API as a JAX-RS application of resource instances. The daemon binds it to its one
 * controller; the ONOS app subclasses it with a supplier that looks its service up on every request
 * (the service may come and go while the web bundle stays) and answers 503 while there is none.
 */
public class HybridlbRestApplication extends Application {
    private final Set<Object> resources;

    public HybridlbRestApplication(HybridlbApi api) {
        this(() -> api);
    }

    /** {@code api} is asked on every request; an {@link org.hybridlb.app.core.ApiException} it throws is the answer. */
    public HybridlbRestApplication(Supplier<HybridlbApi> api) {
        this.resources = Set.of(new VipResource(api), new StatusResource(api));
    }

    @Override
    public Set<Object> getSingletons() {
        return resources;
    }
}
