package org.hybridlb.app.core.rest;

import java.util.Set;
import java.util.function.Supplier;
import javax.ws.rs.core.Application;
import org.hybridlb.app.core.HybridlbApi;

/**
 * The REST API as a JAX-RS application of resource instances. The daemon binds it to its one
 * controller; the ONOS app subclasses it with a supplier that looks its service up on every request
 * (the service may come and go while the web bundle stays) and answers 503 while there is none.
 * {@code GET /openapi.json} describes it ({@link OpenApi}).
 */
public class HybridlbRestApplication extends Application {
    /**
     * The longest request body taken by default (413 beyond); hybridlbd's config may change it
     * ({@code limits.maxBodyBytes}; docs/operating.md gives the size of large configurations).
     */
    public static final long DEFAULT_MAX_BODY_BYTES = 16L << 20;

    private final Set<Object> resources;

    public HybridlbRestApplication(HybridlbApi api) {
        this(() -> api);
    }

    /** {@code api} is asked on every request; an {@link org.hybridlb.app.core.ApiException} it throws is the answer. */
    public HybridlbRestApplication(Supplier<HybridlbApi> api) {
        this(api, DEFAULT_MAX_BODY_BYTES);
    }

    /** {@code maxBodyBytes}: longer request bodies are refused with 413 before they are parsed. */
    public HybridlbRestApplication(Supplier<HybridlbApi> api, long maxBodyBytes) {
        this.resources = Set.of(new VipResource(api, maxBodyBytes), new StatusResource(api), new OpenApiResource(),
                new RefusalMapper());
    }

    @Override
    public Set<Object> getSingletons() {
        return resources;
    }
}
