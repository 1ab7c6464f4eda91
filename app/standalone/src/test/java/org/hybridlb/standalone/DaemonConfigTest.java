package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DaemonConfigTest {
    @TempDir
    Path dir;

    Path write(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    List<String> problems(String json) throws IOException {
        Path f = write("hybridlbd.json", json);
        return assertThrows(ConfigException.class, () -> DaemonConfig.load(f)).problems();
    }

    @Test
    void defaultsAndRelativePaths() throws IOException {
        write("fabric.json", "{}");
        DaemonConfig c = DaemonConfig.load(write("hybridlbd.json", "{\"fabric\": \"fabric.json\"}"));
        assertEquals(dir.resolve("fabric.json"), c.fabric);
        assertEquals(dir.resolve("state"), c.stateDir);
        assertEquals("127.0.0.1", c.listen.getHostString());
        assertEquals(8080, c.listen.getPort());
        assertEquals("sticky", c.algorithm);
        assertEquals(Duration.ofSeconds(10), c.reconcileInterval);
        assertEquals(Duration.ofMillis(200), c.routesInterval);
        assertEquals(null, c.vips);
    }

    @Test
    void everyProblemIsNamedWithFileFieldAndReason() throws IOException {
        List<String> p = problems("{\"vips\": \"missing.json\", \"listen\": \"localhost\", \"algorithm\": \"magic\","
                + " \"smuxEncap\": \"vxlan\", \"intervals\": {\"statsMs\": -1, \"routesMs\": \"fast\", \"bogus\": 1},"
                + " \"colour\": \"red\"}");
        String f = dir.resolve("hybridlbd.json").toString();
        assertTrue(p.contains(f + ": /fabric: missing (required)"), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /vips: no readable file at ")), p.toString());
        assertTrue(p.contains(f + ": /listen: must be host:port, got \"localhost\""), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /algorithm: unknown algorithm \"magic\""
                + " (available on this class path: ") && s.contains("sticky")), p.toString());
        assertTrue(p.contains(f + ": /smuxEncap: must be \"gre\" or \"ipip\", got \"vxlan\""), p.toString());
        assertTrue(p.contains(f + ": /intervals/statsMs: must be an integer from 10 to 86400000, got -1"), p.toString());
        assertTrue(p.contains(f + ": /intervals/routesMs: must be an integer from 10 to 86400000, got \"fast\""), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /intervals/bogus: unknown field")), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /colour: unknown field")), p.toString());
        assertEquals(9, p.size(), p.toString());
    }

    /** The exact ILP lives in the solver tools, which hybridlbd does not carry: the check says so. */
    @Test
    void anAlgorithmOfTheSolverToolsIsNamedAsNotOnThisClassPath() throws IOException {
        List<String> p = problems("{\"fabric\": \"fabric.json\", \"algorithm\": \"ilp\"}");
        String f = dir.resolve("hybridlbd.json").toString();
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /algorithm: algorithm \"ilp\" is not available on"
                + " this class path: it comes with the solver tools (hybridlb-solver-tools")
                && s.contains("available on this class path: greedy, greedy-skip, random, sticky")), p.toString());
    }

    @Test
    void malformedJsonAndDuplicateKeys() throws IOException {
        assertTrue(problems("{\"fabric\": ").get(0).contains(": /: malformed JSON"));
        assertTrue(problems("{\"fabric\": \"a\", \"fabric\": \"b\"}").get(0).contains("Duplicate field 'fabric'"));
        assertTrue(problems("[1]").get(0).endsWith(": /: must be a JSON object"));
    }

    @Test
    void p4SwitchProblemsNameTheField() throws IOException {
        ModelIo.write(dir.resolve("topology.json"), FatTree.generate(new FatTree.Params().k(2)));
        Path fabric = write("fabric.json", "{\"topology\": \"topology.json\", \"ovs\": {\"rundir\": \"/x\"},"
                + " \"switches\": {\"tor-0-0\": {\"bridge\": \"s1\", \"location\": 1, \"p4\": {\"grpc\": \"tcp://sw\","
                + " \"profile\": \"fabric_tna\", \"p4info\": \"nope.txtpb\", \"encap\": \"vxlan\", \"atomicity\": \"best-effort\","
                + " \"electionId\": 0}, \"ports\": {\"agg-0-0\": 0}}}, \"hosts\": {}}");
        List<String> p = assertThrows(ConfigException.class, () -> Fabric.load(fabric)).problems();
        String at = fabric + ": /switches/tor-0-0/p4/";
        assertTrue(p.contains(at + "grpc: must be unix:/path or host:port, got \"tcp://sw\""), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(at + "profile: must be one of [hlb_hmux, ")), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(at + "p4info: cannot read ")), p.toString());
        assertTrue(p.contains(at + "encap: must be gre or ipip, got \"vxlan\""), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(at + "atomicity: must be one of [")), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(at + "electionId")), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(fabric + ": /switches/tor-0-0/ports/agg-0-0: ")), p.toString());
        Path ok = write("fabric2.json", "{\"topology\": \"topology.json\", \"ovs\": {\"rundir\": \"/x\"},"
                + " \"switches\": {\"tor-0-0\": {\"bridge\": \"s1\", \"location\": 7, \"p4\": {\"grpc\": \"unix:/run/sw.sock\","
                + " \"profile\": \"hlb_hmux\", \"p4info\": \"topology.json\"}}}, \"hosts\": {}}");
        List<String> rest = assertThrows(ConfigException.class, () -> Fabric.load(ok)).problems();
        assertTrue(rest.stream().noneMatch(s -> s.contains("/p4/")), rest.toString()); // only the other switches missing
    }

    @Test
    void fabricProblemsNameTheFabricFile() throws IOException {
        ModelIo.write(dir.resolve("topology.json"), FatTree.generate(new FatTree.Params().k(2)));
        Path fabric = write("fabric.json", "{\"topology\": \"topology.json\", \"ovs\": {},"
                + " \"switches\": {\"tor-0-0\": {\"bridge\": \"s1\"}},"
                + " \"hosts\": {\"h1\": {\"ip\": \"10.0.0.300\", \"location\": 5, \"agentUrl\": \"ftp://x\"}},"
                + " \"smuxes\": [{\"id\": \"smux-0\", \"ip\": \"10.0.0.9\", \"host\": \"nope\"}],"
                + " \"controllerCookie\": \"0x4c420000/0xff\"}");
        List<String> p = assertThrows(ConfigException.class, () -> Fabric.load(fabric)).problems();
        String f = fabric.toString();
        assertTrue(p.contains(f + ": /ovs/rundir: missing (required)"), p.toString());
        assertTrue(p.contains(f + ": /switches/tor-0-0/location: missing (required)"), p.toString());
        assertTrue(p.contains(f + ": /hosts/h1/ip: value \"10.0.0.300\" is not an IPv4 address"), p.toString());
        assertTrue(p.contains(f + ": /hosts/h1/agentUrl: value \"ftp://x\" is not an http:// URL"), p.toString());
        assertTrue(p.contains(f + ": /smuxes/0/controlUrl: missing (required)"), p.toString());
        assertTrue(p.contains(f + ": /smuxes/0/host: no host \"nope\" in /hosts"), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /controllerCookie: must be value/mask")), p.toString());
    }

    @Test
    void theDaemonExitsWithCodeTwoAndOneLinePerProblem() throws IOException {
        Path cfg = write("bad.json", "{\"fabric\": \"nowhere.json\", \"listen\": \"1.2.3.4:99999\"}");
        PrintStream old = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true));
        int code;
        try {
            code = new picocli.CommandLine(new Main()).execute("--config", cfg.toString());
        } finally {
            System.setErr(old);
        }
        assertEquals(2, code);
        String[] lines = err.toString().strip().split("\n");
        assertEquals(2, lines.length, err.toString());
        assertTrue(lines[0].startsWith(cfg + ": /fabric: no readable file at "), lines[0]);
        assertEquals(cfg + ": /listen: port of \"1.2.3.4:99999\" must be 0 to 65535", lines[1]);
    }
    @Test
    void anAddressOtherThanLoopbackNeedsTlsAndTokens() throws IOException {
        write("fabric.json", "{}");
        String f = dir.resolve("hybridlbd.json").toString();
        List<String> p = problems("{\"fabric\": \"fabric.json\", \"listen\": \"0.0.0.0:8443\"}");
        assertEquals(List.of(f + ": /listen: 0.0.0.0 is not a loopback address: hybridlbd serves other hosts only with "
                + "TLS and tokens (set tls and tokens; docs/operating.md, \"Security model\")"), p);
        org.hybridlb.standalone.api.TestCerts certs = org.hybridlb.standalone.api.TestCerts.make(dir.resolve("tls"));
        org.hybridlb.standalone.api.Tokens.create(dir.resolve("tokens.json"), "ops",
                org.hybridlb.standalone.api.Tokens.Role.ADMIN);
        String tls = "\"tls\": {\"keystore\": \"tls/hybridlbd.p12\", \"passwordFile\": \"tls/hybridlbd.p12.pass\", "
                + "\"ca\": \"tls/ca.pem\"}";
        p = problems("{\"fabric\": \"fabric.json\", \"listen\": \"0.0.0.0:8443\", " + tls + "}");
        assertEquals(List.of(f + ": /listen: 0.0.0.0 is not a loopback address: hybridlbd serves other hosts only with "
                + "TLS and tokens (set tokens; docs/operating.md, \"Security model\")"), p);
        DaemonConfig c = DaemonConfig.load(write("hybridlbd.json", "{\"fabric\": \"fabric.json\", \"listen\": "
                + "\"0.0.0.0:8443\", \"tokens\": \"tokens.json\", " + tls + "}"));
        assertTrue(c.access.serverTls != null && c.access.clientTls != null && c.access.tokens != null);
        assertEquals(16L << 20, c.access.maxBodyBytes);
        assertEquals(16, c.access.maxConcurrentRequests);
        // the command-line override is held to the same rule
        DaemonConfig loop = DaemonConfig.load(write("hybridlbd.json", "{\"fabric\": \"fabric.json\"}"));
        assertEquals(List.of("--listen: /: 10.9.9.9 is not a loopback address: hybridlbd serves other hosts only with "
                + "TLS and tokens (set tls and tokens; docs/operating.md, \"Security model\")"),
                assertThrows(ConfigException.class, () -> DaemonConfig.withListen(loop, "10.9.9.9:8080")).problems());
        assertTrue(DaemonConfig.withListen(loop, "localhost:8080").listen.getAddress().isLoopbackAddress());
    }

    @Test
    void badTlsTokensAndLimitsAreNamed() throws IOException {
        write("fabric.json", "{}");
        org.hybridlb.standalone.api.TestCerts.make(dir.resolve("tls"));
        write("wrong.pass", "not-the-password\n");
        write("tokens.json", "{\"tokens\": [{\"name\": \"a\", \"role\": \"boss\", \"sha256\": \"" + "0".repeat(64) + "\"}]}");
        String f = dir.resolve("hybridlbd.json").toString();
        List<String> p = problems("{\"fabric\": \"fabric.json\", \"tls\": {\"keystore\": \"tls/hybridlbd.p12\", "
                + "\"passwordFile\": \"wrong.pass\", \"ca\": \"tls/nope.pem\", \"cert\": 1}, \"tokens\": \"tokens.json\", "
                + "\"limits\": {\"maxBodyBytes\": 10, \"maxConcurrentRequests\": 0}}");
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /tls/keystore: " + dir.resolve("tls/hybridlbd.p12")
                + ": cannot read the PKCS#12 keystore (wrong password in ")), p.toString());
        assertTrue(p.stream().anyMatch(s -> s.startsWith(f + ": /tls/ca: " + dir.resolve("tls/nope.pem"))), p.toString());
        assertTrue(p.contains(f + ": /tls/cert: unknown field (known: ca, keystore, passwordFile)"), p.toString());
        assertTrue(p.contains(f + ": /tokens: " + dir.resolve("tokens.json") + ": /tokens/0/role: must be \"viewer\" or "
                + "\"admin\", got \"boss\""), p.toString());
        assertTrue(p.contains(f + ": /limits/maxBodyBytes: must be an integer from 1024 to 1073741824, got 10"), p.toString());
        assertTrue(p.contains(f + ": /limits/maxConcurrentRequests: must be an integer from 1 to 1024, got 0"), p.toString());
        p = problems("{\"fabric\": \"fabric.json\", \"tls\": {\"ca\": \"tls/ca.pem\"}}");
        assertTrue(p.contains(f + ": /tls/keystore: missing (required)"), p.toString());
        assertTrue(p.contains(f + ": /tls/passwordFile: missing (required)"), p.toString());
    }
}
