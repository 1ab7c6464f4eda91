package org.hybridlb.solver.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.topology.DuetTestbed;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Generated files with one field broken: the error names the file, the field (JSON pointer)
 * and the reason, for topology, VIP and traffic files alike.
 */
class BadFilesTest {
    private static Topology topology;
    private static Workload workload;

    @TempDir
    Path dir;

    @BeforeAll
    static void generate() {
        topology = DuetTestbed.generate();
        workload = WorkloadGenerator.generate(topology,
                new WorkloadGenerator.Params().vipCount(40).intervals(2), 5);
    }

    /** Writes {@code value} as JSON after {@code edit}, returns the file. */
    private Path broken(String name, Object value, Consumer<ObjectNode> edit) throws IOException {
        ObjectNode tree = (ObjectNode) ModelIo.MAPPER.valueToTree(value);
        edit.accept(tree);
        Path file = dir.resolve(name);
        Files.writeString(file, ModelIo.MAPPER.writeValueAsString(tree));
        return file;
    }

    private static ObjectNode at(JsonNode root, String pointer) {
        return (ObjectNode) root.at(pointer);
    }

    private static void assertRejected(InvalidInputException e, Path file, String field, String reasonPart) {
        assertEquals(file.toString(), e.source());
        assertEquals(field, e.field());
        assertTrue(e.reason().contains(reasonPart), e.reason());
        assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains(field), e.getMessage());
    }

    @Test
    void topologyFiles() throws IOException {
        Path negative = broken("neg.json", topology, t -> at(t, "/links/3").put("capacityBps", -1));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readTopology(negative)),
                negative, "/links/3/capacityBps", "");
        Path onAgg = broken("smux-on-agg.json", topology, t -> at(t, "/smuxes/1").put("tor", "agg-0-1"));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readTopology(onAgg)),
                onAgg, "/smuxes/1/tor", "not a tor");
        Path sameIp = broken("dup-ip.json", topology, t -> at(t, "/hosts/7").put("ip", topology.hosts.get(3).ip));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readTopology(sameIp)),
                sameIp, "/hosts/7/ip", "duplicate address");
        Path table = broken("table.json", topology, t -> at(t, "/switches/0").putObject("tables").put("ecmp", "lots"));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readTopology(table)),
                table, "/switches/0/tables/ecmp", "");
    }

    @Test
    void vipFiles() throws IOException {
        Path weight = broken("weight.json", workload.vips, v -> at(v, "/vips/2/ports/0/dips/0").put("weight", -1));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readVips(weight)),
                weight, "/vips/2/ports/0/dips/0/weight", "");
        Path anyPort = broken("any-port.json", workload.vips, v -> at(v, "/vips/4/ports/0")
                .put("proto", "any").put("port", 80));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> ModelIo.readVips(anyPort));
        assertEquals(anyPort.toString(), e.source());
        assertTrue(e.field().startsWith("/vips/4/ports"), e.field());
        Path outside = broken("outside.json", workload.vips, v -> at(v, "/vips/1").put("aggregate", "100.65.0.0/16"));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readVips(outside)),
                outside, "/vips/1/aggregate", "not inside its aggregate");
        Path hostBits = broken("host-bits.json", workload.vips, v -> at(v, "/vips/1").put("aggregate",
                at(v, "/vips/1").get("vip").asText() + "/8"));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readVips(hostBits)),
                hostBits, "/vips/1/aggregate", "has host bits set (the network is ");
        Path loop = broken("loop.json", workload.vips, v -> at(v, "/vips/1/ports/0/dips/0").put("ip",
                at(v, "/vips/1").get("vip").asText()));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readVips(loop)),
                loop, "/vips/1/ports/0/dips/0/ip", "is the VIP itself");
        Path loopback = broken("loopback.json", workload.vips, v -> at(v, "/vips/1/ports/0/dips/0").put("ip",
                "127.0.0.5"));
        assertRejected(assertThrows(InvalidInputException.class, () -> ModelIo.readVips(loopback)),
                loopback, "/vips/1/ports/0/dips/0/ip", "127.0.0.5 is not a unicast host address");
        Path strayHost = broken("stray-host.json", workload.vips, v -> {
            for (JsonNode vip : v.get("vips")) {
                ObjectNode dip = (ObjectNode) vip.at("/ports/0/dips/0");
                dip.put(dip.has("hostIp") ? "hostIp" : "ip", "192.0.2.1");
            }
        });
        VipSet vips = ModelIo.readVips(strayHost);
        InvalidInputException stray = assertThrows(InvalidInputException.class,
                () -> ModelChecks.checkVipsAgainstTopology(vips, topology, strayHost.toString()));
        assertEquals(strayHost.toString(), stray.source());
        assertTrue(stray.field().matches("/vips/0/ports/0/dips/0/(hostIp|ip)"), stray.field());
        assertTrue(stray.reason().contains("192.0.2.1") && stray.reason().contains("not the address of a host"),
                stray.reason());
    }

    @Test
    void trafficFiles() throws IOException {
        Path unknownNode = broken("node.json", workload.trace, t -> at(t, "/intervals/1/vips/0/sources")
                .put("tor-9-9", 1000.0));
        assertRejected(assertThrows(InvalidInputException.class,
                () -> ModelIo.readTraffic(unknownNode, workload.vips, topology)),
                unknownNode, "/intervals/1/vips/0/sources/tor-9-9", "unknown source node");
        Path negative = broken("negative.json", workload.trace, t -> at(t, "/intervals/0/vips/3/sources")
                .put("internet", -5.0));
        assertRejected(assertThrows(InvalidInputException.class,
                () -> ModelIo.readTraffic(negative, workload.vips, topology)),
                negative, "/intervals/0/vips/3/sources/internet", "");
        Path stranger = broken("stranger.json", workload.trace, t -> at(t, "/intervals/0/vips/5")
                .put("vip", "203.0.113.9"));
        assertRejected(assertThrows(InvalidInputException.class,
                () -> ModelIo.readTraffic(stranger, workload.vips, topology)),
                stranger, "/intervals/0/vips/5/vip", "unknown VIP");
        // keys are single JSON-pointer tokens (RFC 6901): a DIP's dots stay, "/" and "~" are escaped
        String dip = workload.vips.vips.get(0).ports.get(0).dips.get(0).ip;
        Path dipRate = broken("dip-rate.json", workload.trace, t -> at(t, "/intervals/0/vips/0")
                .putObject("dips").put(dip, -1.0));
        assertRejected(assertThrows(InvalidInputException.class,
                () -> ModelIo.readTraffic(dipRate, workload.vips, topology)),
                dipRate, "/intervals/0/vips/0/dips/" + dip, "below the minimum of 0");
        Path oddKey = broken("odd-key.json", workload.trace, t -> at(t, "/intervals/1/vips/0/sources")
                .put("rack/7~b", 1000.0));
        assertRejected(assertThrows(InvalidInputException.class,
                () -> ModelIo.readTraffic(oddKey, workload.vips, topology)),
                oddKey, "/intervals/1/vips/0/sources/rack~17~0b", "unknown source node");
        Path twice = broken("twice.json", workload.trace, t -> at(t, "/intervals/0/vips/5")
                .put("vip", workload.trace.intervals.get(0).vips.get(4).vip));
        assertRejected(assertThrows(InvalidInputException.class,
                () -> ModelIo.readTraffic(twice, workload.vips, topology)),
                twice, "/intervals/0/vips/5/vip", "appears twice");
    }
}
