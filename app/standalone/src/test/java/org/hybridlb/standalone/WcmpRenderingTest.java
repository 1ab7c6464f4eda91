package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.model.WcmpBuckets;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.ovs.OvsHmuxSouthbound;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The select groups and SMux tables the controller renders for WCMP pools, on a real
 * ovs-vswitchd, are the ones pinned in {@code smux/tests/data/wcmp_rendering.json}: the split test
 * there ({@code smux/tests/agent_wcmp_split.py}) sends 10,000 flows through exactly these, in OVS
 * (ofproto/trace) and in the SMux in every selection mode. After a deliberate change of the
 * rendering, rewrite the file with {@code -Dhlb.wcmp.write=true} and run that test again.
 */
class WcmpRenderingTest {
    static final Path PINNED = Path.of("..", "..", "smux", "tests", "data", "wcmp_rendering.json");
    /** name, weights (one DIP each; 0 = drained). */
    static final Map<String, int[]> POOLS = new java.util.LinkedHashMap<>();

    static {
        POOLS.put("1:2:1", new int[] {1, 2, 1});
        POOLS.put("1:3", new int[] {1, 3});
        POOLS.put("2:4:2 and a drained DIP", new int[] {2, 4, 0, 2});
    }

    @TempDir
    Path dir;

    @Test
    void theRenderedPoolsAreThePinnedOnes() throws IOException {
        Topology topo = FatTree.generate(new FatTree.Params().k(2));
        ObjectNode doc = Json.MAPPER.createObjectNode();
        doc.put("about", "WCMP pools as the controller renders them (app/standalone WcmpRenderingTest writes and"
                + " checks this file): the HMux's OpenFlow 1.5 select group as ovs-vswitchd dumps it, and the"
                + " SMux table entry");
        ArrayNode pools = doc.putArray("pools");
        try (PrivateOvs ovs = PrivateOvs.start()) {
            TestFabric tf = TestFabric.write(dir, topo, ovs, "hlbw", Map.of());
            for (String br : tf.bridges.values()) {
                ovs.addBridge(br, TestFabric.GRE_OFPORT);
            }
            String hm = topo.switches.get(0).id;
            OvsHmuxSouthbound p = new OvsHmuxSouthbound(Fabric.load(tf.file), ovs.ovs, Set::of);
            SwitchIntent.Builder intent = SwitchIntent.builder();
            int n = 0;
            for (Map.Entry<String, int[]> e : POOLS.entrySet()) {
                String vip = "10.100.0." + (++n);
                List<Dip> dips = new ArrayList<>();
                for (int i = 0; i < e.getValue().length; i++) {
                    dips.add(new Dip("10.0." + n + "." + (i + 1), e.getValue()[i], null));
                }
                Vip v = new Vip(vip, "10.100.0.0/16", List.of(new VipPort("tcp", 80, dips)));
                WcmpBuckets buckets = new WcmpBuckets(fresh());
                VipEntry hmux = buckets.hmuxEntry(v);
                for (ServiceEntry svc : hmux.ports) {
                    intent.entry(new ServiceMatch(vip, svc.proto, svc.port), HmuxLayout.hmuxBuckets(svc.dips));
                }
                SwitchIntent want = intent.build();
                p.apply(Map.of(hm, IntentDiff.diff(want, p.read(List.of(hm)).get(hm))));
                assertEquals(SwitchReading.of(want), p.read(List.of(hm)).get(hm), "read back as rendered");
                ObjectNode pool = pools.addObject();
                pool.put("name", e.getKey());
                pool.put("vip", vip);
                ArrayNode w = pool.putArray("weights");
                ArrayNode ips = pool.putArray("dips");
                for (Dip d : dips) {
                    w.add(d.weight);
                    ips.add(d.ip);
                }
                pool.put("ovsGroup", groupOf(ovs, tf.bridges.get(hm), vip));
                JsonNode table = Json.MAPPER.readTree(Json.write(SmuxTable.of(1, List.of(buckets.smuxEntry(v)), "gre")));
                pool.set("smuxEntry", table.at("/vips/0"));
            }
            p.close();
        }
        if (Boolean.getBoolean("hlb.wcmp.write")) {
            Files.writeString(PINNED, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(doc) + "\n");
        }
        assertTrue(Files.isReadable(PINNED), "the pinned rendering is next to the SMux tests: " + PINNED.toAbsolutePath());
        assertEquals(Json.MAPPER.readTree(Files.readString(PINNED)), doc,
                "the controller renders WCMP pools otherwise than " + PINNED + " pins (rewrite it with"
                        + " -Dhlb.wcmp.write=true, then run smux/tests/agent_wcmp_split.py)");
    }

    private static java.util.function.Supplier<Map<String, Integer>> fresh() {
        Map<String, Integer> ids = new HashMap<>();
        return () -> ids;
    }

    /** The select group the VIP's flow points to, as {@code ovs-ofctl dump-groups} prints it. */
    private static String groupOf(PrivateOvs ovs, String bridge, String vip) {
        String flows = ovs.ovs.ofctl("--no-stats", "dump-flows", "unix:" + ovs.dir.resolve(bridge + ".mgmt"),
                "tcp,nw_dst=" + vip);
        Matcher m = Pattern.compile("group:(\\d+)").matcher(flows);
        assertTrue(m.find(), flows);
        String groups = ovs.ovs.ofctl("dump-groups", "unix:" + ovs.dir.resolve(bridge + ".mgmt"), "group_id=" + m.group(1));
        for (String line : groups.split("\n")) {
            if (line.strip().startsWith("group_id=" + m.group(1) + ",")) {
                return line.strip();
            }
        }
        throw new AssertionError("group " + m.group(1) + " not dumped: " + groups);
    }
}
