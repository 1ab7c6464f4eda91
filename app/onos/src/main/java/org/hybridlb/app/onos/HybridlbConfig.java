package org.hybridlb.app.onos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Limits;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.Config;
import org.onosproject.net.config.InvalidFieldException;

/**
 * hybridlb's network configuration ({@code apps/org.hybridlb.app/hybridlb}): the fabric switches
 * (device -> core switch id, role, pod, tunnel port, free table entries), the SMuxes with their
 * control URLs, optional extra hosts, and the VIPs in the solver's VIP-file format.
 *
 * <p>{@link #isValid()} checks every entry and throws {@link InvalidFieldException} naming the
 * field and the reason (ONOS returns it to the REST caller); nothing is half-applied. Checks that
 * need the live network (devices exist) and the controller's own VIP validation (DIPs are hosts of
 * the fabric) run when the manager applies the configuration.
 */
public final class HybridlbConfig extends Config<ApplicationId> {
    public static final String KEY = "hybridlb";
    static final String SWITCHES = "switches";
    /** The largest next id of the P4 programs' routing (16 bits). */
    static final int NEXT_ID_MAX = 0xffff;
    static final String SMUXES = "smuxes";
    static final String HOSTS = "hosts";
    static final String VIPS = "vips";
    static final String LINK_CAPACITY = "linkCapacityBps";
    static final String FAST_FAILOVER = "fastFailover";
    static final String MGMT_TLS = "mgmtTls";
    /** SMux DIP pool limit, the same as the core's REST validation (the solver's Limits). */
    public static final int MAX_DIPS_PER_SERVICE = Limits.MAX_DIPS_PER_SERVICE;
    public static final double DEFAULT_LINK_CAPACITY_BPS = 10e9;

    /** One configured fabric switch. */
    public static final class SwitchConfig {
        public final DeviceId device;
        public final String id;
        public final SwitchRole role;
        public final Integer pod;
        public final Long tunnelPort;
        public final TableCapacity tables;
        /** The next id P4 devices route towards this switch by (routing_v4 set_next_id); null: none. */
        public final Integer nextId;

        SwitchConfig(DeviceId device, String id, SwitchRole role, Integer pod, Long tunnelPort, TableCapacity tables,
                     Integer nextId) {
            this.nextId = nextId;
            this.device = device;
            this.id = id;
            this.role = role;
            this.pod = pod;
            this.tunnelPort = tunnelPort;
            this.tables = tables;
        }
    }

    /** One SMux: the solver's SMux plus where its control API listens. */
    public static final class SmuxConfig {
        public final Smux smux;
        public final String controlUrl;

        SmuxConfig(Smux smux, String controlUrl) {
            this.smux = smux;
            this.controlUrl = controlUrl;
        }
    }

    /**
     * This config's JSON, parsed with the bundle's own Jackson. ONOS 2.7 ships Jackson 2.11, the core
     * needs 2.12+, so the bundle carries its own copy: the ONOS-typed {@code node()} is read through
     * reflection as text, so that no Jackson type crosses between the two class spaces.
     */
    private ObjectNode json() {
        try {
            Object onosNode = Config.class.getMethod("node").invoke(this);
            JsonNode n = Json.MAPPER.readTree(String.valueOf(onosNode));
            if (!n.isObject()) {
                throw new InvalidFieldException("/", "must be a JSON object");
            }
            return (ObjectNode) n;
        } catch (ReflectiveOperationException | java.io.IOException e) {
            throw new InvalidFieldException("/", "unreadable: " + e.getMessage());
        }
    }

    @Override
    public boolean isValid() {
        Iterator<String> names = json().fieldNames();
        while (names.hasNext()) {
            String f = names.next();
            if (!Set.of(SWITCHES, SMUXES, HOSTS, VIPS, LINK_CAPACITY, FAST_FAILOVER, MGMT_TLS).contains(f)) {
                throw new InvalidFieldException("/" + f, "unknown field; allowed: switches, smuxes, hosts, vips, "
                        + "linkCapacityBps, fastFailover, mgmtTls");
            }
        }
        Set<String> switchIds = new HashSet<>();
        for (SwitchConfig s : switches()) {
            if (!switchIds.add(s.id)) {
                throw new InvalidFieldException("/switches/" + s.device + "/id", "duplicate switch id " + s.id);
            }
        }
        Set<String> smuxIds = new HashSet<>();
        for (SmuxConfig s : smuxes()) {
            if (!smuxIds.add(s.smux.id)) {
                throw new InvalidFieldException("/smuxes/" + s.smux.id, "duplicate SMux id");
            }
            if (!switchIds.contains(s.smux.tor)) {
                throw new InvalidFieldException("/smuxes/" + s.smux.id + "/tor", "unknown switch " + s.smux.tor);
            }
        }
        for (Host h : hosts()) {
            if (!switchIds.contains(h.tor)) {
                throw new InvalidFieldException("/hosts/" + h.id + "/tor", "unknown switch " + h.tor);
            }
        }
        agentUrls();
        mgmtTls();
        linkCapacityBps();
        fastFailover();
        vipsBody();
        return true;
    }

    /** The configured switches, checked (throws {@link InvalidFieldException}). */
    public List<SwitchConfig> switches() {
        List<SwitchConfig> out = new ArrayList<>();
        JsonNode sws = json().path(SWITCHES);
        if (sws.isMissingNode()) {
            return out;
        }
        if (!sws.isObject()) {
            throw new InvalidFieldException("/switches", "must be an object of device id -> switch");
        }
        Iterator<Map.Entry<String, JsonNode>> it = sws.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String at = "/switches/" + e.getKey();
            DeviceId device = deviceId(e.getKey(), at);
            JsonNode n = e.getValue();
            String id = text(n, "id", at, true);
            SwitchRole role;
            String roleText = text(n, "role", at, true);
            try {
                role = SwitchRole.parse(roleText);
            } catch (IllegalArgumentException ex) {
                throw new InvalidFieldException(at + "/role", "must be core, agg or tor, got " + roleText);
            }
            Integer pod = n.has("pod") ? nonNegativeInt(n.get("pod"), at + "/pod") : null;
            if (pod == null && role != SwitchRole.CORE) {
                throw new InvalidFieldException(at + "/pod", "required for " + role.json() + " switches");
            }
            Long tunnel = n.has("tunnelPort") ? (long) nonNegativeInt(n.get("tunnelPort"), at + "/tunnelPort") : null;
            if (tunnel != null && tunnel == 0) {
                throw new InvalidFieldException(at + "/tunnelPort", "must be a port number > 0");
            }
            TableCapacity tables = TableCapacity.DEFAULTS;
            if (n.has("tables")) {
                JsonNode t = n.get("tables");
                tables = new TableCapacity(
                        t.has("host") ? nonNegativeInt(t.get("host"), at + "/tables/host") : null,
                        t.has("ecmp") ? nonNegativeInt(t.get("ecmp"), at + "/tables/ecmp") : null,
                        t.has("tunnel") ? nonNegativeInt(t.get("tunnel"), at + "/tables/tunnel") : null);
            }
            if (tunnel == null) {
                // No GRE port: it routes VIPs but cannot encapsulate, so it offers no tunnel entries.
                tables = new TableCapacity(tables.host, tables.ecmp, 0);
            }
            Integer nextId = n.has("nextId") ? nonNegativeInt(n.get("nextId"), at + "/nextId") : null;
            if (nextId != null && (nextId == 0 || nextId > NEXT_ID_MAX)) {
                throw new InvalidFieldException(at + "/nextId", "must be 1.." + NEXT_ID_MAX + " (a 16-bit next id)");
            }
            int aggregates = org.hybridlb.app.core.p4.HmuxP4Config.DEFAULT_AGGREGATE_NEXT_ID_BASE;
            if (nextId != null && nextId >= aggregates
                    && nextId < aggregates + org.hybridlb.app.core.p4.HmuxP4Config.AGGREGATE_NEXT_IDS) {
                throw new InvalidFieldException(at + "/nextId", String.format(java.util.Locale.ROOT, "%d lies in the aggregates' next ids"
                        + " 0x%x..0x%x the app writes on P4 devices", nextId, aggregates,
                        aggregates + org.hybridlb.app.core.p4.HmuxP4Config.AGGREGATE_NEXT_IDS - 1));
            }
            out.add(new SwitchConfig(device, id, role, pod, tunnel, tables, nextId));
        }
        return out;
    }

    public List<SmuxConfig> smuxes() {
        List<SmuxConfig> out = new ArrayList<>();
        int i = 0;
        for (JsonNode n : array(SMUXES)) {
            String at = "/smuxes/" + i++;
            String id = text(n, "id", at, true);
            String ip = ipv4(text(n, "ip", at, true), at + "/ip");
            String tor = text(n, "tor", at, true);
            double capacity = n.path("capacityBps").asDouble(0);
            if (!(capacity > 0)) {
                throw new InvalidFieldException(at + "/capacityBps", "must be a number > 0");
            }
            String url = httpUrl(text(n, "controlUrl", at, true), at + "/controlUrl");
            out.add(new SmuxConfig(new Smux(id, ip, tor, capacity), url));
        }
        return out;
    }

    public List<Host> hosts() {
        List<Host> out = new ArrayList<>();
        int i = 0;
        for (JsonNode n : array(HOSTS)) {
            String at = "/hosts/" + i++;
            out.add(new Host(text(n, "id", at, true), ipv4(text(n, "ip", at, true), at + "/ip"),
                    text(n, "tor", at, true)));
        }
        return out;
    }

    /** Host agents: DIP (host address) -> agent base URL, for the hosts that carry {@code agentUrl}. */
    public Map<String, String> agentUrls() {
        Map<String, String> out = new java.util.TreeMap<>();
        int i = 0;
        for (JsonNode n : array(HOSTS)) {
            String at = "/hosts/" + i++;
            if (!n.has("agentUrl")) {
                continue;
            }
            String url = httpUrl(text(n, "agentUrl", at, true), at + "/agentUrl");
            out.put(ipv4(text(n, "ip", at, true), at + "/ip"), url);
        }
        return out;
    }

    /**
     * TLS towards {@code https://} SMuxes and host agents: {@code mgmtTls: {keystore, passwordFile,
     * ca}}, files on every ONOS host (app/standalone/deploy/hlb-certs makes them): the app's client
     * identity (PKCS#12) and the CA of their certificates (PEM). Null when absent: plain clients.
     * Read once per configuration (the first call, {@link #isValid}).
     */
    public synchronized SSLContext mgmtTls() {
        if (mgmtTls == null) {
            mgmtTls = java.util.Optional.ofNullable(readMgmtTls());
        }
        return mgmtTls.orElse(null);
    }

    private java.util.Optional<SSLContext> mgmtTls;

    private SSLContext readMgmtTls() {
        JsonNode t = json().path(MGMT_TLS);
        if (t.isMissingNode()) {
            return null;
        }
        if (!t.isObject()) {
            throw new InvalidFieldException("/" + MGMT_TLS, "must be an object {keystore, passwordFile, ca}");
        }
        for (Iterator<String> it = t.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!Set.of("keystore", "passwordFile", "ca").contains(f)) {
                throw new InvalidFieldException("/" + MGMT_TLS + "/" + f, "unknown field; allowed: keystore, passwordFile, ca");
            }
        }
        String at = "/" + MGMT_TLS;
        try {
            return TlsFiles.context(TlsFiles.identity(Path.of(text(t, "keystore", at, true)),
                    Path.of(text(t, "passwordFile", at, true))), TlsFiles.trust(Path.of(text(t, "ca", at, true))));
        } catch (IllegalArgumentException e) {   // a file that cannot be read, named in the message
            throw new InvalidFieldException(at, e.getMessage());
        }
    }

    /**
     * Whether {@code VIP/32} routes go through OpenFlow FAILOVER groups whose backup bucket is the
     * aggregate's SMux group (default false).
     */
    public boolean fastFailover() {
        JsonNode n = json().path(FAST_FAILOVER);
        if (n.isMissingNode()) {
            return false;
        }
        if (!n.isBoolean()) {
            throw new InvalidFieldException("/" + FAST_FAILOVER, "must be true or false");
        }
        return n.asBoolean();
    }

    public double linkCapacityBps() {
        JsonNode n = json().path(LINK_CAPACITY);
        if (n.isMissingNode()) {
            return DEFAULT_LINK_CAPACITY_BPS;
        }
        if (!n.isNumber() || !(n.asDouble() > 0)) {
            throw new InvalidFieldException("/" + LINK_CAPACITY, "must be a number > 0");
        }
        return n.asDouble();
    }

    /** True when the config carries VIPs (then netcfg owns the VIP set). */
    public boolean hasVips() {
        return json().has(VIPS);
    }

    /**
     * The VIPs as the body of the core's "replace all VIPs" call, {@code {"vips": [...]}}, after the
     * checks that need no network: addresses, aggregates, duplicates and pool sizes.
     */
    public String vipsBody() {
        Set<String> seen = new HashSet<>();
        int i = 0;
        for (JsonNode v : array(VIPS)) {
            String at = "/vips/" + i++;
            String vip = ipv4(text(v, "vip", at, true), at + "/vip");
            if (!seen.add(vip)) {
                throw new InvalidFieldException(at + "/vip", "duplicate VIP " + vip);
            }
            String aggregate = text(v, "aggregate", at, true);
            prefix(aggregate, at + "/aggregate");
            int j = 0;
            for (JsonNode p : v.path("ports")) {
                String pat = at + "/ports/" + j++;
                Set<String> dips = new HashSet<>();
                int k = 0;
                for (JsonNode d : p.path("dips")) {
                    String dat = pat + "/dips/" + k++;
                    String ip = ipv4(text(d, "ip", dat, true), dat + "/ip");
                    if (!dips.add(ip)) {
                        throw new InvalidFieldException(dat + "/ip", "duplicate DIP " + ip);
                    }
                    if (d.has("hostIp")) {
                        ipv4(text(d, "hostIp", dat, true), dat + "/hostIp");
                    }
                }
                if (dips.size() > MAX_DIPS_PER_SERVICE) {
                    throw new InvalidFieldException(pat + "/dips", dips.size() + " DIPs, over the table limit of "
                            + MAX_DIPS_PER_SERVICE + " per service");
                }
            }
        }
        ObjectNode root = json();
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.set(VIPS, root.has(VIPS) ? root.get(VIPS) : Json.MAPPER.createArrayNode());
        return body.toString();
    }

    /** Every configured device id. */
    public Map<DeviceId, String> devices() {
        Map<DeviceId, String> out = new LinkedHashMap<>();
        for (SwitchConfig s : switches()) {
            out.put(s.device, s.id);
        }
        return out;
    }

    // ---- field helpers (every failure names the field) ------------------------------------------

    private static String httpUrl(String url, String at) {
        try {
            URI u = URI.create(url);
            if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
                throw new IllegalArgumentException("not http(s)://host[:port]");
            }
        } catch (IllegalArgumentException e) {
            throw new InvalidFieldException(at, "not an http(s) URL: " + url);
        }
        return url;
    }

    private ArrayNode array(String field) {
        JsonNode n = json().path(field);
        if (n.isMissingNode()) {
            return Json.MAPPER.createArrayNode();
        }
        if (!n.isArray()) {
            throw new InvalidFieldException("/" + field, "must be an array");
        }
        return (ArrayNode) n;
    }

    private static String text(JsonNode n, String field, String at, boolean required) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw new InvalidFieldException(at + "/" + field, "required");
            }
            return null;
        }
        if (!v.isTextual() || v.asText().isEmpty()) {
            throw new InvalidFieldException(at + "/" + field, "must be a non-empty string");
        }
        return v.asText();
    }

    private static int nonNegativeInt(JsonNode n, String at) {
        if (!n.canConvertToInt() || !n.isIntegralNumber() || n.asInt() < 0) {
            throw new InvalidFieldException(at, "must be an integer >= 0, got " + n);
        }
        return n.asInt();
    }

    private static DeviceId deviceId(String text, String at) {
        try {
            URI u = URI.create(text);
            if (u.getScheme() == null) {
                throw new IllegalArgumentException("no scheme");
            }
            return DeviceId.deviceId(u);
        } catch (IllegalArgumentException e) {
            throw new InvalidFieldException(at, "not a device id (e.g. of:0000000000000001): " + text);
        }
    }

    static String ipv4(String text, String at) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) {
            throw new InvalidFieldException(at, "value \"" + text + "\" is not an IPv4 address");
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit) || Integer.parseInt(p) > 255) {
                throw new InvalidFieldException(at, "value \"" + text + "\" is not an IPv4 address");
            }
        }
        return text;
    }

    private static void prefix(String text, String at) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new InvalidFieldException(at, "value \"" + text + "\" is not an IPv4 prefix a.b.c.d/len");
        }
        ipv4(text.substring(0, slash), at);
        String len = text.substring(slash + 1);
        if (len.isEmpty() || !len.chars().allMatch(Character::isDigit) || len.length() > 2 || Integer.parseInt(len) > 32) {
            throw new InvalidFieldException(at, "value \"" + text + "\" has no prefix length 0..32");
        }
    }
}
