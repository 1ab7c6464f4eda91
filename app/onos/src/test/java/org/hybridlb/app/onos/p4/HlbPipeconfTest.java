package org.hybridlb.app.onos.p4;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.junit.Test;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.pi.model.PiActionId;
import org.onosproject.net.pi.model.PiActionProfileId;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiMatchType;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.model.PiPipeconfId;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.net.pi.model.PiPipelineModel;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.model.PiTableModel;
import org.onosproject.net.pi.service.PiPipeconfListener;
import org.onosproject.net.pi.service.PiPipeconfService;

/**
 * The pipeconfs: each profile's committed P4Info parsed by ONOS's own parser (onos-protocols-p4runtime-model
 * 2.7.0) into the model ONOS would drive the device with; the interpreter's mappings against that model;
 * the loader against a pipeconf service.
 */
public class HlbPipeconfTest {
    private static final Path P4INFO = Path.of(System.getProperty("user.dir"), "..", "..", "p4", "p4info");

    /** Table names of a P4Info text file (its {@code tables { preamble { name: ... } }}). */
    private static Set<String> namesIn(String profile, String block) throws Exception {
        String text = Files.readString(P4INFO.resolve(profile + ".p4info.txtpb"));
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^" + block + " \\{\\n  preamble \\{\\n    id: \\d+\\n    name: \"([^\"]+)\"")
                .matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    public void everyProfileParsesIntoTheModelOfItsP4Info() throws Exception {
        for (String profile : HlbPipeconfs.PROFILES) {
            PiPipelineModel model = HlbPipeconfLoader.model(profile);
            Set<String> tables = model.tables().stream().map(t -> t.id().id()).collect(Collectors.toCollection(TreeSet::new));
            Set<String> expected = namesIn(profile, "tables");
            assertFalse(expected.isEmpty());
            assertEquals(profile, expected, tables);
            assertEquals(profile, namesIn(profile, "action_profiles"), model.actionProfiles().stream()
                    .map(p -> p.id().id()).collect(Collectors.toCollection(TreeSet::new)));
            assertEquals(profile, namesIn(profile, "registers"), model.registers().stream()
                    .map(p -> p.id().id()).collect(Collectors.toCollection(TreeSet::new)));

            PiTableModel svc = model.table(PiTableId.of(HlbP4Info.HMUX_VIP_SERVICE)).orElseThrow();
            assertField(svc, HlbP4Info.HMUX_VIP_SERVICE_DST_ADDR, 32, PiMatchType.EXACT);
            assertField(svc, HlbP4Info.HMUX_VIP_SERVICE_PROTOCOL, 8, PiMatchType.EXACT);
            assertField(svc, HlbP4Info.HMUX_VIP_SERVICE_DST_PORT, 16, PiMatchType.EXACT);
            assertEquals(HlbP4Info.HMUX_SERVICE_SIZE, svc.maxSize());
            PiTableModel select = model.table(PiTableId.of(HlbP4Info.HMUX_DIP_SELECT)).orElseThrow();
            assertEquals(PiActionProfileId.of(HlbP4Info.HMUX_DIP_SELECTOR), select.actionProfile().id());
            assertTrue(select.actionProfile().hasSelector());
            assertEquals(HlbP4Info.HMUX_SELECTOR_SIZE, select.actionProfile().size());
            assertEquals(32, select.action(PiActionId.of(HlbP4Info.HMUX_SET_DIP)).orElseThrow()
                    .param(org.onosproject.net.pi.model.PiActionParamId.of(HlbP4Info.HMUX_SET_DIP_TUNNEL_DST))
                    .orElseThrow().bitWidth());
            assertField(model.table(PiTableId.of(HlbP4Info.ROUTING_ROUTING_V4)).orElseThrow(),
                    HlbP4Info.ROUTING_ROUTING_V4_DST_ADDR, 32, PiMatchType.LPM);
            assertEquals(profile, HlbPipeconfs.decodesCookies(profile),
                    model.table(PiTableId.of(HlbP4Info.CHEETAH_ALL_SERVERS)).isPresent());
        }
    }

    private static void assertField(PiTableModel t, String field, int bits, PiMatchType type) {
        var f = t.matchField(PiMatchFieldId.of(field)).orElseThrow(() -> new AssertionError(t.id() + " has no " + field));
        assertEquals(t.id() + "." + field, bits, f.bitWidth());
        assertEquals(t.id() + "." + field, type, f.matchType());
    }

    @Test
    public void aPipeconfCarriesItsInterpreterAndTheCommittedP4InfoText() throws Exception {
        for (String profile : HlbPipeconfs.PROFILES) {
            PiPipeconf p = HlbPipeconfLoader.pipeconf(profile);
            assertEquals(new PiPipeconfId("org.hybridlb." + profile), p.id());
            assertEquals(Optional.of(profile), HlbPipeconfs.profileOf(p.id()));
            assertEquals(HlbInterpreter.class, p.implementation(PiPipelineInterpreter.class).orElseThrow());
            try (InputStream in = p.extension(PiPipeconf.ExtensionType.P4_INFO_TEXT).orElseThrow()) {
                assertArrayEquals(Files.readAllBytes(P4INFO.resolve(profile + ".p4info.txtpb")), in.readAllBytes());
            }
        }
        assertEquals(Optional.empty(), HlbPipeconfs.profileOf(new PiPipeconfId("org.onosproject.pipelines.fabric")));
        assertEquals(Optional.empty(), HlbPipeconfs.profileOf(new PiPipeconfId("org.hybridlb.nope")));
        try {
            HlbPipeconfs.p4Info("nope");
            fail("a P4Info of an unknown profile");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("hlb_hmux"));
        }
    }

    @Test
    public void theInterpreterMapsOnlyToWhatThePipelineHas() throws Exception {
        HlbInterpreter in = new HlbInterpreter();
        PiPipelineModel model = HlbPipeconfLoader.model(HlbP4Info.PROFILE_HLB_HMUX);
        PiTableModel svc = model.table(PiTableId.of(HlbP4Info.HMUX_VIP_SERVICE)).orElseThrow();
        for (Criterion.Type t : List.of(Criterion.Type.IPV4_DST, Criterion.Type.IP_PROTO, Criterion.Type.TCP_DST,
                Criterion.Type.UDP_DST)) {
            assertTrue(t.toString(), svc.matchField(in.mapCriterionType(t).orElseThrow()).isPresent());
        }
        assertEquals(Optional.empty(), in.mapCriterionType(Criterion.Type.ETH_SRC));
        PiTableId t0 = in.mapFlowRuleTableId(0).orElseThrow();
        PiTableModel routes = model.table(t0).orElseThrow();
        assertTrue(routes.matchField(in.mapCriterionType(Criterion.Type.IPV4_DST).orElseThrow()).isPresent());
        assertEquals(Optional.empty(), in.mapFlowRuleTableId(1));
        // a drop in table 0 is its const default action; an output cannot be expressed
        var drop = in.mapTreatment(DefaultTrafficTreatment.emptyTreatment(), t0);
        assertEquals(routes.constDefaultAction().orElseThrow().id(), drop.id());
        assertEquals(Optional.of(drop), in.getOriginalDefaultAction(t0));
        try {
            in.mapTreatment(DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(1)).build(), t0);
            fail("an output was mapped");
        } catch (PiPipelineInterpreter.PiInterpreterException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("OUTPUT"));
        }
        for (PiTableId t : List.of(PiTableId.of(HlbP4Info.HMUX_VIP_SERVICE), PiTableId.of(HlbP4Info.HMUX_VIP_WHOLE))) {
            assertEquals(model.table(t).orElseThrow().constDefaultAction().orElseThrow().id(),
                    in.getOriginalDefaultAction(t).orElseThrow().id());
        }
        try {
            in.mapInboundPacket(null, DeviceId.deviceId("device:p4"));
            fail("a packet-in was mapped");
        } catch (PiPipelineInterpreter.PiInterpreterException e) {
            assertTrue(e.getMessage().contains("CPU port"));
        }
    }

    /** A pipeconf service that keeps what it is given. */
    public static class Pipeconfs implements PiPipeconfService {
        final Map<PiPipeconfId, PiPipeconf> registered = new HashMap<>();
        final List<String> calls = new ArrayList<>();

        @Override
        public void register(PiPipeconf pipeconf) {
            if (registered.putIfAbsent(pipeconf.id(), pipeconf) != null) {
                throw new IllegalStateException(pipeconf.id() + " registered twice");
            }
            calls.add("register " + pipeconf.id());
        }

        @Override
        public void unregister(PiPipeconfId id) {
            if (registered.remove(id) == null) {
                throw new IllegalStateException(id + " not registered");
            }
            calls.add("unregister " + id);
        }

        @Override
        public Iterable<PiPipeconf> getPipeconfs() {
            return registered.values();
        }

        @Override
        public Optional<PiPipeconf> getPipeconf(PiPipeconfId id) {
            return Optional.ofNullable(registered.get(id));
        }

        @Override
        public Optional<PiPipeconf> getPipeconf(DeviceId deviceId) {
            return Optional.empty();
        }

        @Override
        public void bindToDevice(PiPipeconfId pipeconfId, DeviceId deviceId) {
        }

        @Override
        public String getMergedDriver(DeviceId deviceId, PiPipeconfId pipeconfId) {
            return null;
        }

        @Override
        public Optional<PiPipeconfId> ofDevice(DeviceId deviceId) {
            return Optional.empty();
        }

        @Override
        public void addListener(PiPipeconfListener listener) {
        }

        @Override
        public void removeListener(PiPipeconfListener listener) {
        }
    }

    @Test
    public void theLoaderRegistersEveryProfileAndRemovesOnlyItsOwn() {
        Pipeconfs service = new Pipeconfs();
        PiPipeconf other = HlbPipeconfLoader.pipeconf(HlbP4Info.PROFILE_HLB_CHEETAH);
        service.register(other);  // another copy of the app registered this one first
        service.calls.clear();
        HlbPipeconfLoader loader = new HlbPipeconfLoader();
        loader.pipeconfService = service;
        loader.activate();
        assertEquals(List.of("register org.hybridlb.hlb_hmux", "register org.hybridlb.hlb_cheetah_stateful"),
                service.calls);
        assertEquals(3, service.registered.size());
        loader.deactivate();
        assertEquals(Set.of(other.id()), service.registered.keySet());
    }
}
