package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;

/**
 * A model P4 switch running {@code profile} as switch {@link #SW} of a k=2 fat tree's fabric.json,
 * with the fabric's routes written (a next id per other switch, the SMuxes behind the first), and
 * hybridlbd's P4Runtime southbound to it.
 */
final class P4rtUnderTest implements AutoCloseable {
    static final String SW = "tor-0-0";

    final ModelP4Switch sw;
    final Fabric fabric;
    final P4rtHmuxSouthbound sb;

    P4rtUnderTest(Path dir, String profile) throws Exception {
        Topology topo = FatTree.generate(new FatTree.Params().k(2));
        sw = new ModelP4Switch(Files.createDirectories(dir.resolve("sw")));
        ObjectNode p4 = DaemonConfig.STRICT.createObjectNode().put("grpc", sw.address).put("deviceId", 1)
                .put("profile", profile).put("p4info", ModelP4Switch.p4info(profile).toString());
        TestFabric.write(dir, topo, dir.resolve("ovs"), "p4t", Map.of(), Map.of(SW, p4));
        fabric = Fabric.load(dir.resolve("fabric.json"));
        Map<String, Integer> nextIds = new TreeMap<>();
        fabric.switches.values().stream().filter(s -> !s.id.equals(SW)).forEach(s -> nextIds.put(s.id, s.location));
        Map<String, Integer> hosts = new TreeMap<>();
        int first = nextIds.values().iterator().next();
        fabric.smuxes.values().forEach(m -> hosts.put(m.ip, first));
        sw.programFabric(profile, nextIds, hosts);
        sb = new P4rtHmuxSouthbound(fabric);
    }

    SwitchReading read() {
        return sb.read(List.of(SW)).get(SW);
    }

    /** Writes what {@code want} needs as the switch holds it; it reads back as that, consistent, diffing empty. */
    void reconcile(SwitchIntent want) {
        SwitchIntent holdable = sb.capability(SW).holdable(want);
        SwitchDelta d = IntentDiff.diff(holdable, read());
        if (!d.isEmpty()) {
            sb.apply(Map.of(SW, d));
        }
        SwitchReading back = read();
        assertTrue(back.ok(), back.toString());
        assertEquals(holdable, back.intent);
        assertTrue(back.inconsistent.isEmpty(), back.inconsistent.toString());
        assertTrue(IntentDiff.diff(holdable, back).isEmpty(), back.toString());
    }

    @Override
    public void close() {
        sb.close();
        sw.close();
    }
}
