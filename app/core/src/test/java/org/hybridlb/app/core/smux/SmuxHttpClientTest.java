package org.hybridlb.app.core.smux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.SmuxPin;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.core.tls.TlsFiles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SMux client against a local HTTP server answering like smux/src/control.c. */
class SmuxHttpClientTest {
    HttpServer server;
    final List<String> requests = new ArrayList<>();
    volatile String table = "{\"version\":0,\"vips\":[]}";
    volatile int putStatus = 200;
    volatile int pinStatus = 200;
    final List<String> bodies = new ArrayList<>();
    SmuxHttpClient client;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", x -> {
            String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            requests.add(x.getRequestMethod() + " " + x.getRequestURI().getPath());
            String path = x.getRequestURI().getPath();
            int status = 200;
            String out;
            if (path.equals("/table") && x.getRequestMethod().equals("PUT")) {
                status = putStatus;
                if (status == 200) {
                    table = body;
                }
                out = status == 200 ? "{\"version\":1}" : "{\"error\":\"stale version\",\"field\":\"version\"}";
            } else if (path.equals("/table")) {
                out = table;
            } else if (path.equals("/stats")) {
                out = "{\"version\":3,\"services\":[{\"vip\":\"10.100.0.1\",\"proto\":\"tcp\",\"port\":80,"
                        + "\"packets\":10,\"bytes\":1500,\"dips\":[]},{\"vip\":\"10.100.0.1\",\"proto\":\"udp\","
                        + "\"port\":53,\"packets\":1,\"bytes\":80,\"dips\":[]},{\"vip\":\"10.100.0.2\",\"proto\":\"tcp\","
                        + "\"port\":0,\"packets\":0,\"bytes\":0,\"dips\":[]}]}";
            } else if (path.equals("/pins")) {
                bodies.add(x.getRequestMethod() + " " + body);
                status = pinStatus;
                out = x.getRequestMethod().equals("GET")
                        ? "{\"pins\":[{\"client\":\"10.9.0.7\",\"clientPort\":40001,\"vip\":\"10.100.0.1\","
                                + "\"vipPort\":80,\"proto\":\"tcp\",\"dip\":\"10.0.1.2\",\"tunnel\":\"10.0.1.2\"}],"
                                + "\"count\":1,\"capacity\":65536}"
                        : status == 200 ? "{\"replaced\":false}"
                        : "{\"error\":\"invalid pin\",\"field\":\"dip\",\"reason\":\"required\"}";
            } else if (path.equals("/connections/diverging")) {
                out = "{\"version\":3,\"connTable\":true,\"services\":[{\"vip\":\"10.100.0.1\",\"proto\":\"tcp\","
                        + "\"port\":80,\"connections\":9,\"diverging\":2},{\"vip\":\"10.100.0.1\",\"proto\":\"udp\","
                        + "\"port\":53,\"connections\":1,\"diverging\":1}]}";
            } else {
                status = 404;
                out = "{\"error\":\"not found\"}";
            }
            byte[] b = out.getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(status, b.length);
            x.getResponseBody().write(b);
            x.close();
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/";
        client = new SmuxHttpClient(id -> id.equals("smux-0") ? url : null, Duration.ofSeconds(2));
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    static SmuxTable oneVip(long version) {
        VipEntry e = new VipEntry("10.100.0.1", "10.100.0.0/16", List.of(new ServiceEntry("tcp", 80,
                List.of(new Bucket("10.0.0.2", 1, null, 0)))));
        return SmuxTable.of(version, List.of(e), "gre");
    }

    @Test
    void putsAndReadsTheTable() {
        client.putTable("smux-0", oneVip(1));
        SmuxTable back = client.getTable("smux-0");
        assertEquals(1, back.version);
        assertTrue(oneVip(1).sameVips(back), Json.write(back));
        assertEquals(List.of("PUT /table", "GET /table"), requests);
    }

    @Test
    void aRefusedTableNamesTheStatusAndTheSmuxsReason() {
        putStatus = 409;
        SouthboundException e = assertThrows(SouthboundException.class, () -> client.putTable("smux-0", oneVip(1)));
        assertTrue(e.getMessage().contains("smux-0 refused table version 1: HTTP 409")
                && e.getMessage().contains("stale version"), e.getMessage());
    }

    @Test
    void countersAndDivergingConnectionsAddUpPerVip() {
        assertEquals(Map.of("10.100.0.1", 1580L, "10.100.0.2", 0L), client.vipBytes("smux-0"));
        assertEquals(Map.of("10.100.0.1", 3L), client.divergingConnections("smux-0"));
    }

    /** deploy/hlb-certs (openssl) makes a CA, the SMux's server and the controller's client identity in dir. */
    static void certs(Path dir) throws Exception {
        String script = Path.of("..", "standalone", "deploy", "hlb-certs").toAbsolutePath().toString();
        for (String[] args : new String[][] {{"ca"}, {"server", "smux", "--ip", "127.0.0.1"},
            {"controller", "ctl", "--ip", "127.0.0.1"}}) {
            List<String> cmd = new ArrayList<>(List.of("bash", script, dir.toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), out);
        }
    }

    @Test
    void anHttpsSmuxIsCalledWithTheControllersClientCertificate(@TempDir Path dir)
            throws Exception {
        certs(dir);
        SSLContext serverTls = TlsFiles.context(
                TlsFiles.identity(dir.resolve("smux.p12"), dir.resolve("smux.p12.pass")),
                TlsFiles.trust(dir.resolve("ca.pem")));
        HttpsServer tls = HttpsServer.create(
                new InetSocketAddress("127.0.0.1", 0), 0);
        tls.setHttpsConfigurator(new HttpsConfigurator(serverTls) {
            @Override
            public void configure(HttpsParameters p) {
                SSLParameters sp = serverTls.getDefaultSSLParameters();
                sp.setNeedClientAuth(true);   // as the SMux refuses writes without one
                p.setSSLParameters(sp);
            }
        });
        tls.createContext("/table", x -> {
            x.getRequestBody().readAllBytes();
            byte[] b = "{\"version\":1}".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, b.length);
            x.getResponseBody().write(b);
            x.close();
        });
        tls.start();
        try {
            String url = "https://127.0.0.1:" + tls.getAddress().getPort();
            SSLContext trustOnly = TlsFiles.context(null,
                    TlsFiles.trust(dir.resolve("ca.pem")));
            SSLContext controller = TlsFiles.context(
                    TlsFiles.identity(dir.resolve("ctl.p12"), dir.resolve("ctl.p12.pass")),
                    TlsFiles.trust(dir.resolve("ca.pem")));
            AtomicReference<SSLContext> now =
                    new AtomicReference<>(trustOnly);
            SmuxHttpClient c = new SmuxHttpClient(id -> url, Duration.ofSeconds(5),
                    TlsFiles.following(now::get, Duration.ofSeconds(5)));
            assertThrows(SouthboundException.class, () -> c.putTable("smux-0", oneVip(1)), "no client certificate");
            now.set(controller);   // the TLS settings change (ONOS netcfg): the next call follows
            c.putTable("smux-0", oneVip(1));
            SmuxHttpClient plain = new SmuxHttpClient(id -> url, Duration.ofSeconds(5));
            assertThrows(SouthboundException.class, () -> plain.putTable("smux-0", oneVip(2)), "the JDK's CAs do not know it");
        } finally {
            tls.stop(0);
        }
    }

    @Test
    void anSmuxWithoutUrlOrThatDoesNotAnswerIsASouthboundError() {
        assertTrue(assertThrows(SouthboundException.class, () -> client.getTable("smux-9")).getMessage()
                .contains("smux-9 has no control URL"));
        server.stop(0);
        assertThrows(SouthboundException.class, () -> client.vipBytes("smux-0"));
    }

    @Test
    void pinsArePostedDeletedByFlowAndReadBack() throws Exception {
        SmuxPin pin = new SmuxPin("10.9.0.7", 40001, "10.100.0.1", 80, "tcp", "10.0.1.2");
        client.putPin("smux-0", pin);
        client.removePin("smux-0", pin);
        assertEquals(List.of("POST /pins", "DELETE /pins"), requests);
        assertEquals(Json.MAPPER.readTree("{\"client\":\"10.9.0.7\",\"clientPort\":40001,\"vip\":\"10.100.0.1\","
                + "\"vipPort\":80,\"proto\":\"tcp\",\"dip\":\"10.0.1.2\"}"),
                Json.MAPPER.readTree(bodies.get(0).substring("POST ".length())));
        assertEquals(Json.MAPPER.readTree("{\"client\":\"10.9.0.7\",\"clientPort\":40001,\"vip\":\"10.100.0.1\","
                + "\"vipPort\":80,\"proto\":\"tcp\"}"), Json.MAPPER.readTree(bodies.get(1).substring("DELETE ".length())),
                "a removal names the flow only");
        assertEquals(List.of(pin), client.pins("smux-0"));
        pinStatus = 400;
        SouthboundException e = assertThrows(SouthboundException.class, () -> client.putPin("smux-0", pin));
        assertTrue(e.getMessage().contains("HTTP 400") && e.getMessage().contains("\"field\":\"dip\""), e.getMessage());
        assertThrows(SouthboundException.class, () -> client.removePin("smux-0", pin));
        assertThrows(SouthboundException.class, () -> client.putPin("smux-9", pin), "no control URL");
    }
}
