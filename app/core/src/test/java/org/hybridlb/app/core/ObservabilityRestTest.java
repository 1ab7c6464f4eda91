package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.ws.rs.core.StreamingOutput;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code /metrics}, {@code /topology} and the web view {@code /ui/} in Jersey's in-memory runtime. */
class ObservabilityRestTest {
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    Controller controller;
    ApplicationHandler app;

    static final class Reply {
        final int status;
        final String type;
        final String location;
        final String body;

        Reply(int status, String type, String location, String body) {
            this.status = status;
            this.type = type;
            this.location = location;
            this.body = body;
        }
    }

    @BeforeEach
    void start() {
        controller = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                fabric.ports(new FakeFabric.MemoryStore()));
        controller.start();
        controller.awaitIdle(20_000);
        app = new ApplicationHandler(ResourceConfig.forApplication(new HybridlbRestApplication(controller)));
    }

    @AfterEach
    void stop() {
        controller.close();
    }

    Reply get(String path) throws Exception {
        ContainerRequest req = new ContainerRequest(URI.create("http://localhost/base/"),
                URI.create("http://localhost/base/" + path), "GET", null, new MapPropertiesDelegate(), null);
        ContainerResponse r = app.apply(req).get();
        Object e = r.getEntity();
        String body;
        if (e instanceof StreamingOutput) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ((StreamingOutput) e).write(out);
            body = out.toString(StandardCharsets.UTF_8);
        } else if (e instanceof byte[]) {
            body = new String((byte[]) e, StandardCharsets.UTF_8);
        } else {
            body = e == null ? null : e.toString();
        }
        return new Reply(r.getStatus(), r.getMediaType() == null ? null : r.getMediaType().toString(),
                r.getLocation() == null ? null : r.getLocation().toString(), body);
    }

    @Test
    void metricsAreServedInPrometheusTextFormat() throws Exception {
        Reply r = get("metrics");
        assertEquals(200, r.status, r.body);
        assertTrue(r.type.startsWith("text/plain") && r.type.contains("version=0.0.4"), r.type);
        assertTrue(r.body.contains("# TYPE hybridlb_reconciles_total counter"), r.body);
        assertTrue(r.body.contains("hybridlb_reconciles_total{cause=\"start\"} 1.0"), r.body);
        assertTrue(r.body.contains("hybridlb_switches " + topo.switches.size() + ".0"), r.body);
        assertTrue(r.body.contains("hybridlb_controller_active 1.0"), r.body);
    }

    @Test
    void metricsWithoutAControllerAnswer503() throws Exception {
        app = new ApplicationHandler(ResourceConfig.forApplication(new HybridlbRestApplication((HybridlbApi) controller)));
        Reply r = get("metrics");
        assertEquals(503, r.status);
        assertTrue(r.body.contains("no controller metrics here"), r.body);
    }

    @Test
    void topologyIsTheSharedSchema() throws Exception {
        Reply r = get("topology");
        assertEquals(200, r.status, r.body);
        Topology t = Json.read(r.body, Topology.class);
        assertEquals(topo.switches.size(), t.switches.size());
        assertEquals(topo.links.size(), t.links.size());
        assertEquals(topo.smuxes.get(0).tor, t.smuxes.get(0).tor);
    }

    @Test
    void theWebViewIsServedFromTheJarWithEveryAssetAndNothingFromElsewhere() throws Exception {
        Reply redirect = get("ui");
        assertEquals(301, redirect.status);
        assertEquals("http://localhost/base/ui/", redirect.location, "the page's relative links need the slash");
        Reply page = get("ui/");
        assertEquals(200, page.status);
        assertTrue(page.type.startsWith("text/html"), page.type);
        // every file the page names is served from here, and nothing points outside the daemon
        Matcher m = Pattern.compile("(?:src|href)=\"([^\"]+)\"").matcher(page.body);
        int assets = 0;
        while (m.find()) {
            String ref = m.group(1);
            if (ref.startsWith("data:")) {
                continue;
            }
            assertFalse(ref.contains("//"), "no CDN, no absolute URL: " + ref);
            Reply asset = get("ui/" + ref);
            assertEquals(200, asset.status, ref);
            assertFalse(asset.body.contains("http://") && !asset.body.contains("http://www.w3.org/2000/svg"),
                    ref + " fetches nothing from elsewhere");
            assertFalse(asset.body.contains("https://"), ref);
            assets++;
        }
        assertEquals(2, assets, "the script and the style sheet");
        Reply unknown = get("ui/..%2Fpom.xml");
        assertEquals(404, unknown.status);
        assertEquals(404, get("ui/Controller.class").status, "only the view's own files");
    }
}
