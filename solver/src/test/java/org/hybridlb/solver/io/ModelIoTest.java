package org.hybridlb.solver.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Limits;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;

class ModelIoTest {
    private static final String TOPO = "{\"switches\":["
            + "{\"id\":\"c1\",\"role\":\"core\"},"
            + "{\"id\":\"a1\",\"role\":\"agg\",\"pod\":0},"
            + "{\"id\":\"t1\",\"role\":\"tor\",\"pod\":0,\"tables\":{\"tunnel\":64}}],"
            + "\"links\":[{\"a\":\"c1\",\"b\":\"a1\",\"capacityBps\":4e10},{\"a\":\"a1\",\"b\":\"t1\",\"capacityBps\":1e10}],"
            + "\"hosts\":[{\"id\":\"h1\",\"ip\":\"10.0.0.1\",\"tor\":\"t1\"}]}";

    private static Topology topo(String json) {
        Topology t = ModelIo.parse(json, "topo.json", Schema.TOPOLOGY, Topology.class);
        ModelChecks.checkTopology(t, "topo.json");
        return t;
    }

    private static VipSet vips(String json) {
        VipSet v = ModelIo.parse(json, "vips.json", Schema.VIPS, VipSet.class);
        ModelChecks.checkVips(v, "vips.json");
        return v;
    }

    @Test
    void readsTopologyWithTableDefaults() {
        Topology t = topo(TOPO);
        assertEquals(3, t.switches.size());
        assertEquals(64, t.switches.get(2).tables.tunnel);
        assertEquals(4096, t.switches.get(2).tables.ecmp, "unset tables take Duet's defaults");
    }

    @Test
    void malformedJsonNamesLineAndColumn() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> topo("{\"switches\": [}"));
        assertEquals("topo.json", e.source());
        assertTrue(e.field().startsWith("line 1"), e.getMessage());
    }

    @Test
    void schemaErrorNamesTheField() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> topo(TOPO.replace("\"role\":\"agg\"", "\"role\":\"spine\"")));
        assertEquals("/switches/1/role", e.field());
    }

    @Test
    void badHostAddressIsReportedAsSuch() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> topo(TOPO.replace("10.0.0.1", "10.0.0.300")));
        assertEquals("/hosts/0/ip", e.field());
        assertTrue(e.reason().contains("not an IPv4 address"), e.reason());
    }

    @Test
    void linkToUnknownSwitchIsRejected() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> topo(TOPO.replace("\"b\":\"t1\"", "\"b\":\"t9\"")));
        assertEquals("/links/1/b", e.field());
        assertTrue(e.reason().contains("t9"));
    }

    @Test
    void hostMustHangOffATor() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> topo(TOPO.replace("\"tor\":\"t1\"", "\"tor\":\"a1\"")));
        assertEquals("/hosts/0/tor", e.field());
    }

    @Test
    void vipOutsideItsAggregateIsRejected() {
        String json = "{\"vips\":[{\"vip\":\"100.64.1.1\",\"aggregate\":\"100.65.0.0/16\","
                + "\"ports\":[{\"proto\":\"any\",\"port\":0,\"dips\":[{\"ip\":\"10.0.0.1\"}]}]}]}";
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> vips(json));
        assertEquals("/vips/0/aggregate", e.field());
    }

    @Test
    void duplicateDipAndBadWeightAreRejected() {
        String base = "{\"vips\":[{\"vip\":\"100.64.1.1\",\"aggregate\":\"100.64.0.0/16\","
                + "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[%s]}]}]}";
        InvalidInputException dup = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, "{\"ip\":\"10.0.0.1\"},{\"ip\":\"10.0.0.1\"}")));
        assertEquals("/vips/0/ports/0/dips/1/ip", dup.field());
        InvalidInputException weight = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, "{\"ip\":\"10.0.0.1\",\"weight\":65536}")));
        assertEquals("/vips/0/ports/0/dips/0/weight", weight.field());
        VipSet ok = vips(String.format(base, "{\"ip\":\"10.0.0.1\",\"weight\":3}"));
        assertEquals(3, ok.vips.get(0).ports.get(0).dips.get(0).weight);
        // weight 0 is a drained DIP (no new flows), not an error
        VipSet drained = vips(String.format(base, "{\"ip\":\"10.0.0.1\",\"weight\":0},{\"ip\":\"10.0.0.2\"}"));
        assertEquals(0, drained.vips.get(0).ports.get(0).dips.get(0).weight);
    }

    @Test
    void cookieAffinitiesAndMechanismsAreReadAndCheckedByField() {
        String base = "{\"vips\":[{\"vip\":\"100.64.1.1\",\"aggregate\":\"100.64.0.0/16\"%s,"
                + "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.0.1\"}%s]}]}]}";
        for (String m : List.of("wrr", "rr", "hash", "p2c", "least-loaded", "awrr")) {
            Vip v = vips(String.format(base, ",\"affinity\":\"cheetah-stateful\",\"mechanism\":\"" + m + "\"", ""))
                    .vips.get(0);
            assertTrue(v.cheetah() && v.stateful(), m);
            assertEquals(m, v.effectiveMechanism());
        }
        Vip plain = vips(String.format(base, ",\"affinity\":\"cheetah\"", "")).vips.get(0);
        assertTrue(plain.cheetah() && !plain.stateful());
        assertEquals("wrr", plain.effectiveMechanism());
        assertTrue(!plain.sameAffinity(vips(String.format(base, ",\"affinity\":\"cheetah-stateful\"", "")).vips.get(0)),
                "cheetah and cheetah-stateful differ");

        InvalidInputException affinity = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, ",\"affinity\":\"stateful\"", "")));
        assertEquals("/vips/0/affinity", affinity.field());
        InvalidInputException mechanism = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, ",\"affinity\":\"cheetah-stateful\",\"mechanism\":\"p3c\"", "")));
        assertEquals("/vips/0/mechanism", mechanism.field());
        InvalidInputException hashOnly = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, ",\"mechanism\":\"least-loaded\"", "")));
        assertEquals("/vips/0/mechanism", hashOnly.field());
        assertTrue(hashOnly.reason().contains("cheetah-stateful"), hashOnly.reason());
        InvalidInputException oneHost = assertThrows(InvalidInputException.class, () -> vips(String.format(base,
                ",\"affinity\":\"cheetah-stateful\"", ",{\"ip\":\"10.0.0.2\",\"hostIp\":\"10.0.0.1\"}")));
        assertEquals("/vips/0/ports/0/dips/1/hostIp", oneHost.field());
        assertTrue(oneHost.reason().contains("one DIP per host"), oneHost.reason());
        // the cookie hash: siphash13 when absent, crc32c on request, only with a cheetah affinity
        assertEquals("siphash13", plain.effectiveCookieHash());
        Vip crc = vips(String.format(base, ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\"", "")).vips.get(0);
        assertEquals("crc32c", crc.effectiveCookieHash());
        assertTrue(!crc.sameAffinity(plain), "another cookie hash is another affinity");
        assertEquals(null, vips(String.format(base, "", "")).vips.get(0).effectiveCookieHash());
        InvalidInputException hashVip = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, ",\"cookieHash\":\"crc32c\"", "")));
        assertEquals("/vips/0/cookieHash", hashVip.field());
        assertTrue(hashVip.reason().contains("only for affinity"), hashVip.reason());
        InvalidInputException unknownHash = assertThrows(InvalidInputException.class,
                () -> vips(String.format(base, ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32\"", "")));
        assertEquals("/vips/0/cookieHash", unknownHash.field());
        // the controller's owner list is not configuration: refused as an unknown field
        InvalidInputException owners = assertThrows(InvalidInputException.class, () -> vips(String.format(base,
                ",\"affinity\":\"cheetah-stateful\",\"statefulOwners\":[\"10.0.0.9\"]", "")));
        assertTrue(owners.getMessage().contains("statefulOwners"), owners.getMessage());
    }

    /** The limits hold for configurations built in memory too (the controller edits pools one DIP at a time). */
    @Test
    void theModelChecksHoldTheLimits() {
        List<Dip> pool = new ArrayList<>();
        for (int i = 0; i <= Limits.MAX_DIPS_PER_SERVICE; i++) {
            pool.add(new Dip("10.1." + (i / 250) + "." + (i % 250 + 1), 1, null));
        }
        InvalidInputException big = assertThrows(InvalidInputException.class, () -> ModelChecks.checkVips(
                new VipSet(List.of(new Vip("100.64.1.1", "100.64.0.0/16", List.of(new VipPort("tcp", 80, pool))))), "m"));
        assertEquals("/vips/0/ports/0/dips", big.field());
        assertEquals("4097 DIPs, over the limit of 4096 per service", big.reason());

        // WCMP units: weights 1 and 4096 are 4097 equal buckets; 4096 and 8192 reduce to 1 and 2
        InvalidInputException units = assertThrows(InvalidInputException.class, () -> ModelChecks.checkVips(
                new VipSet(List.of(wcmpVip(1, 4096))), "m"));
        assertEquals("/vips/0/ports/0/dips", units.field());
        assertEquals("the weights make 4097 WCMP units (each DIP weight / the weights' greatest common divisor,"
                + " one more per DIP of weight 0), over the limit of 4096 per service: use smaller weights", units.reason());
        ModelChecks.checkVips(new VipSet(List.of(wcmpVip(4096, 8192))), "m");
        ModelChecks.checkVips(new VipSet(List.of(wcmpVip(1, 4095))), "m"); // 4096: fits
        // a drained DIP keeps a bucket on the SMuxes
        InvalidInputException drained = assertThrows(InvalidInputException.class, () -> ModelChecks.checkVips(
                new VipSet(List.of(wcmpVip(1, 4095, 0))), "m"));
        assertEquals("/vips/0/ports/0/dips", drained.field());

        List<VipPort> ports = new ArrayList<>();
        for (int p = 1; p <= Limits.MAX_SERVICES_PER_VIP + 1; p++) {
            ports.add(new VipPort("tcp", p, List.of(new Dip("10.0.0.1", 1, null))));
        }
        InvalidInputException many = assertThrows(InvalidInputException.class, () -> ModelChecks.checkVips(
                new VipSet(List.of(new Vip("100.64.1.1", "100.64.0.0/16", ports))), "m"));
        assertEquals("/vips/0/ports", many.field());
        assertEquals("65 services, over the limit of 64 per VIP", many.reason());

        // 1,025 VIPs of 64 services: each VIP is fine, the whole does not fit one SMux table
        List<Vip> vips = new ArrayList<>();
        List<VipPort> full = ports.subList(0, Limits.MAX_SERVICES_PER_VIP);
        for (int v = 0; v < 1025; v++) {
            vips.add(new Vip("100.64." + (v / 250) + "." + (v % 250 + 1), "100.64.0.0/16", full));
        }
        InvalidInputException total = assertThrows(InvalidInputException.class,
                () -> ModelChecks.checkVips(new VipSet(vips), "m"));
        assertEquals("/vips", total.field());
        assertEquals("65600 services in all, over the limit of 65536 (one SMux table)", total.reason());
        ModelChecks.checkVips(new VipSet(vips.subList(0, 1024)), "m"); // 65,536: fits

        // the whole table counts buckets: 257 services of 4,096 units each are more than 2^20 entries
        List<Vip> heavy = new ArrayList<>();
        for (int v = 0; v < 257; v++) {
            heavy.add(new Vip("100.65." + (v / 250) + "." + (v % 250 + 1), "100.65.0.0/16",
                    wcmpVip(1, 4095).ports));
        }
        InvalidInputException entries = assertThrows(InvalidInputException.class,
                () -> ModelChecks.checkVips(new VipSet(heavy), "m"));
        assertEquals("/vips", entries.field());
        assertEquals("1052672 DIP entries (WCMP units) in all, over the limit of 1048576 (one SMux table)", entries.reason());
    }

    private static Vip wcmpVip(int... weights) {
        List<Dip> dips = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            dips.add(new Dip("10.2.0." + (i + 1), weights[i], null));
        }
        return new Vip("100.64.1.1", "100.64.0.0/16", List.of(new VipPort("tcp", 80, dips)));
    }
}
