package org.hybridlb.app.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;

/**
 * Validates REST bodies with the solver's own schema and {@link ModelChecks} (and so its limits,
 * {@code org.hybridlb.solver.model.Limits}), and reports the offending field as a JSON pointer
 * into the request body (e.g. {@code /ports/0/dips/1/ip}).
 */
final class VipValidator {
    private static final String SOURCE = "request";
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** A DIP to add and the service it joins (proto/port may be absent: the VIP's only service). */
    static final class DipRequest {
        final Dip dip;
        final String proto;
        final Integer port;

        DipRequest(Dip dip, String proto, Integer port) {
            this.dip = dip;
            this.proto = proto;
            this.port = port;
        }
    }

    Vip parseVip(String body) {
        JsonNode node = object(body);
        ObjectNode doc = NODES.objectNode();
        doc.putArray("vips").add(node);
        validate(doc, "/vips/0");
        Vip v;
        try {
            v = Json.MAPPER.treeToValue(node, Vip.class);
        } catch (JsonProcessingException e) {
            throw ApiException.invalid("/", e.getOriginalMessage());
        }
        return v;
    }

    /** A whole configuration {@code {"vips": [...]}}; fields are pointers into that document. */
    List<Vip> parseVipSet(String body, Topology topology) {
        JsonNode node = object(body);
        validate((ObjectNode) node, "");
        VipSet set;
        try {
            set = Json.MAPPER.treeToValue(node, VipSet.class);
        } catch (JsonProcessingException e) {
            throw ApiException.invalid("/", e.getOriginalMessage());
        }
        try {
            ModelChecks.checkVips(set, SOURCE);
            ModelChecks.checkVipsAgainstTopology(set, topology, SOURCE);
        } catch (InvalidInputException e) {
            throw ApiException.invalid(e);
        }
        return set.vips;
    }

    DipRequest parseDip(String body) {
        JsonNode node = object(body);
        ObjectNode dip = ((ObjectNode) node).deepCopy();
        JsonNode proto = dip.remove("proto");
        JsonNode port = dip.remove("port");
        ObjectNode svc = NODES.objectNode();
        svc.set("proto", proto != null ? proto : NODES.textNode("tcp"));
        svc.set("port", port != null ? port : NODES.numberNode(1));
        svc.putArray("dips").add(dip);
        ObjectNode vip = NODES.objectNode();
        vip.put("vip", "0.0.0.0");
        vip.put("aggregate", "0.0.0.0/0");
        vip.putArray("ports").add(svc);
        ObjectNode doc = NODES.objectNode();
        ArrayNode vips = doc.putArray("vips");
        vips.add(vip);
        try {
            Schema.VIPS.validate(doc, SOURCE);
        } catch (InvalidInputException e) {
            String f = e.field() == null ? "/" : e.field();
            f = strip(f, "/vips/0/ports/0/dips/0");
            f = strip(f, "/vips/0/ports/0");
            throw ApiException.invalid(f, e.reason());
        }
        try {
            Dip d = Json.MAPPER.treeToValue(dip, Dip.class);
            return new DipRequest(d, proto == null ? null : proto.asText(), port == null ? null : port.asInt());
        } catch (JsonProcessingException e) {
            throw ApiException.invalid("/", e.getOriginalMessage());
        }
    }

    /** The service ("proto/port") a DIP request joins on {@code v}. */
    String serviceFor(Vip v, String proto, Integer port, String field) {
        if (proto == null && port == null) {
            if (v.ports.size() == 1) {
                return VipConfigs.key(v.ports.get(0));
            }
            List<String> keys = new ArrayList<>();
            v.ports.forEach(p -> keys.add(VipConfigs.key(p)));
            throw ApiException.invalid(field, "VIP " + v.vip + " has several services " + keys
                    + "; say which with proto and port");
        }
        if (proto == null) {
            throw ApiException.invalid(field, "proto is required with port");
        }
        return proto + "/" + (port == null ? 0 : port);
    }

    /**
     * Checks the VIP at {@code index} of the configuration after a change to it. A problem of that
     * VIP names its field in the request body; the same VIP twice is a conflict.
     */
    void checkAll(List<Vip> all, int index, Topology topology) {
        for (int i = 0; i < all.size(); i++) {
            if (i != index && all.get(i).vip.equals(all.get(index).vip)) {
                throw ApiException.conflict("/vip", "duplicate VIP " + all.get(index).vip);
            }
        }
        // the other VIPs were checked when they came in: check only this one (O(1) per request)
        VipSet set = new VipSet(List.of(all.get(index)));
        String prefix = "/vips/0";
        try {
            ModelChecks.checkVips(set, SOURCE);
            ModelChecks.checkVipsAgainstTopology(set, topology, SOURCE);
        } catch (InvalidInputException e) {
            String f = e.field() == null ? "" : e.field();
            if (f.equals(prefix) || f.startsWith(prefix + "/")) {
                if (e.reason().startsWith("duplicate VIP")) {
                    throw ApiException.conflict("/vip", e.reason());
                }
                throw ApiException.invalid(strip(f, prefix), e.reason());
            }
            throw ApiException.conflict("/vip", "the configuration would be invalid at " + f + ": " + e.reason());
        }
        try {
            ModelChecks.checkTotals(all, SOURCE); // the whole configuration must fit one SMux table
        } catch (InvalidInputException e) {
            throw ApiException.conflict("/vip", e.reason());
        }
    }

    private static JsonNode object(String body) {
        if (body == null || body.isBlank()) {
            throw ApiException.invalid("/", "empty body; a JSON object is required");
        }
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw ApiException.invalid("/", "malformed JSON at line " + e.getLocation().getLineNr() + " column "
                    + e.getLocation().getColumnNr() + ": " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw ApiException.invalid("/", "a JSON object is required");
        }
        return node;
    }

    private static void validate(ObjectNode doc, String prefix) {
        try {
            Schema.VIPS.validate(doc, SOURCE);
        } catch (InvalidInputException e) {
            throw ApiException.invalid(strip(e.field() == null ? "/" : e.field(), prefix), e.reason());
        }
    }

    static String strip(String field, String prefix) {
        if (prefix.isEmpty()) {
            return field;
        }
        if (field.equals(prefix)) {
            return "/";
        }
        if (field.startsWith(prefix + "/")) {
            return field.substring(prefix.length());
        }
        return field;
    }
}
