package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import javax.ws.rs.client.Entity;
import javax.ws.rs.core.Application;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.onos.rest.HybridlbWebApplication;
import org.junit.After;
import org.junit.Test;
import org.onlab.osgi.TestServiceDirectory;

/**
 * The REST API as ONOS serves it: {@link HybridlbWebApplication} (what web.xml registers) looked up
 * through a service directory, in Jersey's test container, over the app running on ONOS adapters.
 */
public class RestApiTest extends JerseyTest {
    private HybridlbManagerTest app;

    @Override
    protected Application configure() {
        app = HybridlbManagerTest.started();
        TestServiceDirectory dir = new TestServiceDirectory().add(HybridlbService.class, app.manager);
        return ResourceConfig.forApplication(new HybridlbWebApplication(dir));
    }

    @After
    public void stopApp() {
        app.tearDown();
    }

    private static JsonNode json(Response r) throws Exception {
        return Json.MAPPER.readTree(r.readEntity(String.class));
    }

    @Test
    public void vipsAndAssignmentAnswerTheDocumentedJson() throws Exception {
        Response r = target("vips").request().get();
        assertEquals(200, r.getStatus());
        assertEquals(MediaType.APPLICATION_JSON_TYPE, r.getMediaType());
        JsonNode vips = json(r).path("vips");
        assertEquals(1, vips.size());
        assertEquals(HybridlbManagerTest.VIP, vips.get(0).path("vip").asText());
        assertEquals("10.0.1.2", vips.get(0).path("ports").get(0).path("dips").get(0).path("ip").asText());

        JsonNode a = json(target("assignment").request().get());
        assertEquals("smux", a.path("installed").path(HybridlbManagerTest.VIP).asText());
        assertTrue(a.path("downSwitches").isArray());
        JsonNode s = json(target("smuxes").request().get()).path("smuxes");
        assertEquals("smux-1", s.get(0).path("id").asText());
        assertTrue(s.get(0).path("live").asBoolean());
    }

    @Test
    public void theOpenApiDescriptionIsServedAsByHybridlbd() throws Exception {
        Response r = target("openapi.json").request().get();
        assertEquals(200, r.getStatus());
        JsonNode doc = json(r);
        assertEquals("3.1.0", doc.path("openapi").asText());
        assertEquals(org.hybridlb.app.core.rest.OpenApi.text(), Json.MAPPER.writeValueAsString(doc) + "\n");
        assertTrue(doc.path("paths").has("/vips/{vip}/dips/{dip}"));
    }

    @Test
    public void theControllerMetricsAreServedBesideTheApi() throws Exception {
        Response r = target("metrics").request().get();
        assertEquals(200, r.getStatus());
        assertTrue(r.getMediaType().toString(), r.getMediaType().toString().startsWith("text/plain"));
        String text = r.readEntity(String.class);
        assertTrue(text, text.contains("hybridlb_vips{mux=\"smux\",placement=\"smux\"} 1.0"));
        assertTrue(text, text.contains("hybridlb_controller_active 1.0"));
        assertTrue(text, text.contains("hybridlb_southbound_duration_seconds_count{operation=\"put_table\",southbound=\"smux\"}"));
    }

    @Test
    public void aDipAddedOverRestReachesTheFabric() throws Exception {
        Response r = target("vips/" + HybridlbManagerTest.VIP + "/dips").request()
                .post(Entity.entity("{\"ip\": \"10.0.2.2\"}", MediaType.APPLICATION_JSON_TYPE));
        assertEquals(201, r.getStatus());
        app.settle();
        assertEquals(3, app.onos.smuxes.tables.get("smux-1").vips.get(0).ports.get(0).dips.size());
    }

    @Test
    public void badInputIsA400NamingTheFieldAndChangesNothing() throws Exception {
        String body = "{\"vip\": \"10.100.0.2\", \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\": \"tcp\","
                + " \"port\": 80, \"dips\": [{\"ip\": \"10.0.1.300\"}]}]}";
        int flows = app.onos.flows.entries.size();
        Response r = target("vips").request().post(Entity.entity(body, MediaType.APPLICATION_JSON_TYPE));
        assertEquals(400, r.getStatus());
        JsonNode e = json(r);
        assertEquals("/ports/0/dips/0/ip", e.path("field").asText());
        assertTrue(e.path("reason").asText(), e.path("reason").asText().contains("10.0.1.300"));
        assertEquals(1, app.manager.api().vips().size());
        assertEquals(flows, app.onos.flows.entries.size());
        assertEquals(404, target("vips/10.100.9.9").request().get().getStatus());
    }
}
