package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;

import javax.ws.rs.core.Application;
import javax.ws.rs.core.Response;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.onos.rest.HybridlbWebApplication;
import org.junit.After;
import org.junit.Test;
import org.onlab.osgi.ServiceDirectory;
import org.onlab.osgi.ServiceNotFoundException;

/**
 * The web application is created once, when ONOS starts the web bundle; the app's component may be
 * activated after it, or restarted under it. Every request looks the service up again: 503 with the
 * reason while it is missing, the API as soon as it is there.
 */
public class RestServiceLookupTest extends JerseyTest {
    /** ONOS's registry as the web application sees it: the component registers and unregisters. */
    private Registry registry;
    private HybridlbManagerTest app;

    private static final class Registry implements ServiceDirectory {
        volatile HybridlbService service;

        @Override
        @SuppressWarnings("unchecked")
        public <T> T get(Class<T> serviceClass) {
            if (serviceClass != HybridlbService.class || service == null) {
                throw new ServiceNotFoundException("Service " + serviceClass.getName() + " not found");
            }
            return (T) service;
        }
    }

    @Override
    protected Application configure() {
        registry = new Registry(); // JerseyTest calls this from its constructor, before field initialisers
        return ResourceConfig.forApplication(new HybridlbWebApplication(registry));
    }

    @After
    public void stopApp() {
        if (app != null) {
            app.tearDown();
        }
    }

    @Test
    public void answers503UntilTheComponentIsActiveThenServesItWithoutARestart() throws Exception {
        Response r = target("vips").request().get();
        assertEquals(503, r.getStatus());
        assertEquals(HybridlbWebApplication.NOT_ACTIVE,
                Json.MAPPER.readTree(r.readEntity(String.class)).path("reason").asText());

        app = HybridlbManagerTest.started();
        registry.service = app.manager;
        assertEquals(200, target("vips").request().get().getStatus());
        assertEquals(200, target("assignment").request().get().getStatus());

        registry.service = null; // the component is deactivated (a service it needs went away)
        assertEquals(503, target("smuxes").request().get().getStatus());
        registry.service = app.manager;
        assertEquals(200, target("smuxes").request().get().getStatus());
    }
}
