package org.hybridlb.app.core.rest;

import java.util.Set;
import javax.ws.rs.core.Application;
import org.hybridlb.app.core.HybridlbApi;

/**
 * The REST API as a JAX-RS application of resource instances bound to one controller. The daemon
 * mounts it on its embedded server; the ONOS app subclasses it with a no-argument constructor that
 * looks its service up, and registers it under {@code /onos/hybridlb/}.
 */
public class HybridlbRestApplication extends Application {
    private final Set<Object> resources;

    public HybridlbRestApplication(HybridlbApi api) {
        this.resources = Set.of(new VipResource(api), new StatusResource(api));
    }

    @Override
    public Set<Object> getSingletons() {
        return resources;
    }
}
