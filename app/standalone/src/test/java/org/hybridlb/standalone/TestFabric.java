package org.hybridlb.standalone;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;

/** Writes topology.json + fabric.json for a topology: bridge "&lt;prefix&gt;&lt;n&gt;" per switch, location n. */
final class TestFabric {
    static final int GRE_OFPORT = 100;

    final Path file;
    final Map<String, String> bridges = new LinkedHashMap<>();
    final Map<String, Integer> locations = new LinkedHashMap<>();

    private TestFabric(Path file) {
        this.file = file;
    }

    static TestFabric write(Path dir, Topology topo, PrivateOvs ovs, String bridgePrefix, Map<String, String> smuxUrls)
            throws IOException {
        return write(dir, topo, ovs.dir, bridgePrefix, smuxUrls, Map.of());
    }

    /** With {@code p4}: switch id -> its {@code "p4"} object. */
    static TestFabric write(Path dir, Topology topo, Path ovsDir, String bridgePrefix, Map<String, String> smuxUrls,
                            Map<String, ObjectNode> p4) throws IOException {
        ModelIo.write(dir.resolve("topology.json"), topo);
        ObjectNode f = DaemonConfig.STRICT.createObjectNode();
        f.put("name", topo.name);
        f.put("topology", "topology.json");
        f.putObject("ovs").put("rundir", ovsDir.toString());
        f.putObject("tables").put("vip", 0).put("underlay", 1).put("location", 2);
        f.put("controllerCookie", Fabric.DEFAULT_CONTROLLER_COOKIE);
        f.put("controllerGroupIdBase", Fabric.DEFAULT_GROUP_ID_BASE);
        f.put("locationRoute", "load:{location}->NXM_NX_REG0[],resubmit(,2)");
        TestFabric tf = new TestFabric(dir.resolve("fabric.json"));
        ObjectNode sw = f.putObject("switches");
        int n = 1;
        for (Switch s : topo.switches) {
            String br = bridgePrefix + n;
            ObjectNode o = sw.putObject(s.id);
            o.put("bridge", br);
            o.put("location", n);
            o.putObject("tunnel").put("ofport", GRE_OFPORT).put("actionsPrefix", "set_field:" + n + "->pkt_mark");
            if (p4.containsKey(s.id)) {
                o.set("p4", p4.get(s.id));
            }
            tf.bridges.put(s.id, br);
            tf.locations.put(s.id, n);
            n++;
        }
        ObjectNode hosts = f.putObject("hosts");
        int h = 100;
        for (Host x : topo.hosts) {
            hosts.putObject(x.id).put("ip", x.ip).put("location", h++).put("role", "dip");
        }
        ArrayNode smuxes = f.putArray("smuxes");
        for (Smux m : topo.smuxes) {
            String hid = "h-" + m.id;
            hosts.putObject(hid).put("ip", m.ip).put("location", h++).put("role", "smux");
            smuxes.addObject().put("id", m.id).put("host", hid).put("ip", m.ip)
                    .put("controlUrl", smuxUrls.getOrDefault(m.id, "http://127.0.0.1:9")).put("bgpPeer", m.ip);
        }
        Files.writeString(tf.file, DaemonConfig.STRICT.writerWithDefaultPrettyPrinter().writeValueAsString(f));
        return tf;
    }
}
