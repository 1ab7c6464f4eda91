package org.hybridlb.standalone.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.standalone.api.ApiServer;
import org.hybridlb.standalone.api.TestCerts;
import org.hybridlb.standalone.api.Tokens;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI against hybridlbd's HTTPS server with tokens: --ca, --token-file, and the token commands. */
class SecureCliTest {
    @TempDir
    static Path dir;
    static ApiServer server;
    static Path adminFile;
    static Path viewerFile;

    @BeforeAll
    static void serve() throws Exception {
        TestCerts certs = TestCerts.make(dir.resolve("tls"));
        Path tokens = dir.resolve("tokens.json");
        String[] r = run(null, null, "token", "create", "--tokens", tokens.toString(), "--name", "ops", "--role", "admin");
        assertEquals("0", r[0], r[2]);
        adminFile = Files.writeString(dir.resolve("admin.token"), r[1]);
        r = run(null, null, "token", "create", "--tokens", tokens.toString(), "--name", "dash", "--role", "viewer");
        viewerFile = Files.writeString(dir.resolve("viewer.token"), r[1]);
        server = new ApiServer(new ApiServer.Settings(new InetSocketAddress("127.0.0.1", 0),
                TlsFiles.context(TlsFiles.identity(certs.p12("hybridlbd"), certs.pass("hybridlbd")), null),
                Tokens.load(tokens), 1 << 20, 8), new HybridlbRestApplication(new HybridlbCliTest.FakeApi())).start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String[] run(Path tokenFile, String url, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> a = new ArrayList<>();
        if (url != null) {
            a.addAll(List.of("--url", url, "--ca", dir.resolve("tls/ca.pem").toString()));
        }
        if (tokenFile != null) {
            a.addAll(List.of("--token-file", tokenFile.toString()));
        }
        a.addAll(List.of(args));
        int code = HybridlbCli.run(a.toArray(new String[0]), new PrintWriter(out), new PrintWriter(err));
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    @Test
    void aTokenAndTheCaAreAllTheCliNeeds() {
        String[] r = run(viewerFile, server.url(), "vips");
        assertEquals("0", r[0], r[2]);
        assertTrue(r[1].contains("10.100.0.1  10.100.0.0/16  tcp/80:2"), r[1]);
        r = run(viewerFile, server.url(), "vip", "rm", "10.100.0.1");
        assertEquals("1", r[0]);
        assertTrue(r[2].startsWith("hybridlb: HTTP 403 forbidden\n  field:  Authorization\n  reason: token 'dash' is a "
                + "viewer token"), r[2]);
        r = run(adminFile, server.url(), "vip", "rm", "10.100.0.1");
        assertEquals("0", r[0], r[2]);
        r = run(null, server.url(), "vips");
        assertEquals("1", r[0]);
        assertEquals("hybridlb: HTTP 401 unauthorized\n  field:  Authorization\n"
                + "  reason: a token is required (Authorization: Bearer <token>)\n", r[2]);
    }

    @Test
    void withoutTheCaTheServerIsNotTrusted() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = HybridlbCli.run(new String[] {"--url", server.url(), "--token-file", viewerFile.toString(), "vips"},
                new PrintWriter(out), new PrintWriter(err));
        assertEquals(3, code);
        assertTrue(err.toString().contains("SSLHandshakeException"), err.toString());
    }

    @Test
    void tokensAreRevokedByName() throws Exception {
        Path tokens = dir.resolve("other-tokens.json");
        String[] r = run(null, null, "token", "create", "--tokens", tokens.toString(), "--name", "ci", "--role", "root");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("must be viewer or admin, got 'root'"), r[2]);
        r = run(null, null, "token", "create", "--tokens", tokens.toString(), "--name", "ci", "--role", "admin");
        assertEquals("0", r[0], r[2]);
        String token = r[1].strip();
        assertEquals("ci", Tokens.load(tokens).check(token).name);
        r = run(null, null, "token", "create", "--tokens", tokens.toString(), "--name", "ci", "--role", "viewer");
        assertEquals("1", r[0]);
        assertTrue(r[2].contains("a token named \"ci\" exists"), r[2]);
        assertEquals("0", run(null, null, "token", "revoke", "--tokens", tokens.toString(), "--name", "ci")[0]);
        assertEquals(null, Tokens.load(tokens).check(token));
        r = run(null, null, "token", "revoke", "--tokens", tokens.toString(), "--name", "ci");
        assertEquals("1", r[0]);
        assertTrue(r[2].contains("no token named \"ci\""), r[2]);
    }
}
