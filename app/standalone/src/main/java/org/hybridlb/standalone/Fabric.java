package org.hybridlb.standalone;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;

/**
 * The emulated (or real) fabric as the daemon drives it: fabric.json (its format: app/standalone/README.md)
 * plus the solver topology it names. Unknown fields are ignored
 * (the file grows); the fields the daemon uses are checked.
 */
public final class Fabric {
    /** One topology switch: an OVS bridge, or a P4Runtime switch when {@link #p4} is set. */
    public static final class SwitchInfo {
        public final String id;
        public final String bridge;
        public final int location;
        /** OpenFlow port of the flow-based GRE port; null: this switch cannot be an HMux. */
        public final Integer tunnelOfport;
        /** Actions before the HMux group (e.g. {@code set_field:5->pkt_mark}); may be empty. */
        public final String tunnelActionsPrefix;
        /** The switch's P4Runtime southbound ({@code "p4"}); null: Open vSwitch over OpenFlow. */
        public final P4Switch p4;
        /** Neighbour switch id -> this switch's port towards it ({@code "ports"}, optional). */
        public final Map<String, Integer> ports;

        SwitchInfo(String id, String bridge, int location, Integer tunnelOfport, String tunnelActionsPrefix, P4Switch p4,
                   Map<String, Integer> ports) {
            this.id = id;
            this.bridge = bridge;
            this.location = location;
            this.tunnelOfport = tunnelOfport;
            this.tunnelActionsPrefix = tunnelActionsPrefix;
            this.p4 = p4;
            this.ports = ports;
        }
    }

    /** A switch driven over P4Runtime (the {@code "p4"} object of a switch; app/standalone/README.md). */
    public static final class P4Switch {
        /** The atomicities of a Write, by their fabric.json names (P4Runtime's {@code WriteRequest.Atomicity}). */
        public static final List<String> ATOMICITIES = List.of("continue-on-error", "rollback-on-error", "dataplane-atomic");

        /** {@code unix:/path} or {@code host:port}. */
        public final String grpc;
        public final long deviceId;
        public final long electionId;
        /** The program ({@code p4/profiles.json}): hlb_hmux, or a Cheetah one. */
        public final String profile;
        public final Path p4info;
        public final HashContract.Encap encap;
        /** The next id of the fabric's routes towards this switch on the other P4 switches. */
        public final int nextId;
        /** One of {@link #ATOMICITIES}. */
        public final String atomicity;

        P4Switch(String grpc, long deviceId, long electionId, String profile, Path p4info, HashContract.Encap encap,
                 int nextId, String atomicity) {
            this.grpc = grpc;
            this.deviceId = deviceId;
            this.electionId = electionId;
            this.profile = profile;
            this.p4info = p4info;
            this.encap = encap;
            this.nextId = nextId;
            this.atomicity = atomicity;
        }
    }

    /** A host of the emulation (DIP host, SMux host, client). */
    public static final class HostInfo {
        public final String id;
        public final String ip;
        public final int location;
        public final String role;
        public final String agentUrl;

        HostInfo(String id, String ip, int location, String role, String agentUrl) {
            this.id = id;
            this.ip = ip;
            this.location = location;
            this.role = role;
            this.agentUrl = agentUrl;
        }
    }

    /** An SMux: where its control API and its BGP session are. */
    public static final class SmuxInfo {
        public final String id;
        public final String host;
        public final String ip;
        public final String controlUrl;
        public final String bgpPeer;

        SmuxInfo(String id, String host, String ip, String controlUrl, String bgpPeer) {
            this.id = id;
            this.host = host;
            this.ip = ip;
            this.controlUrl = controlUrl;
            this.bgpPeer = bgpPeer;
        }
    }

    /** The controller's flows carry this cookie (value/mask) unless fabric.json says otherwise. */
    public static final String DEFAULT_CONTROLLER_COOKIE = "0x4c420000/0xffff0000";
    /** The controller's groups take ids from here up unless fabric.json says otherwise. */
    public static final long DEFAULT_GROUP_ID_BASE = 65536;
    /**
     * The daemon's select groups take ids in [controllerGroupIdBase, + this): it deletes a group of
     * that range nothing points at (what a half-written change leaves) and never touches another.
     * The fabric's own groups lie outside it (and below the fast-failover ids from 0xf0000000).
     */
    public static final long CONTROLLER_GROUP_SPAN = 1L << 24;
    /** A P4 switch's election id unless fabric.json says otherwise: above the emulation's own client (1). */
    public static final long DEFAULT_ELECTION_ID = 100;
    static final List<String> P4_PROFILES = List.of(HlbP4Info.PROFILE_HLB_HMUX, HlbP4Info.PROFILE_HLB_CHEETAH,
            HlbP4Info.PROFILE_HLB_CHEETAH_STATEFUL);

    public final Path file;
    public final String name;
    public final Topology topology;
    public final Path ovsRundir;
    public final int vipTable;
    public final long cookie;
    public final long cookieMask;
    public final long groupIdBase;
    public final String locationRoute;
    /**
     * Fast failover (optional, both or neither): {@code tables.fallback} holds the VIP aggregates
     * again, and {@code locationWatchGroup} names the group whose liveness says a location is
     * reachable; a VIP route then goes through a fast-failover group that falls back to the
     * aggregate (the SMuxes) in the data path the moment its HMux becomes unreachable.
     */
    public final Integer fallbackTable;
    public final String locationWatchGroup;
    public final Map<String, SwitchInfo> switches;
    public final Map<String, HostInfo> hosts;
    public final Map<String, SmuxInfo> smuxes;
    public final Path vtyDir;

    private Fabric(Path file, String name, Topology topology, Path ovsRundir, int vipTable, long cookie,
                   long cookieMask, long groupIdBase, String locationRoute, Integer fallbackTable,
                   String locationWatchGroup, Map<String, SwitchInfo> switches,
                   Map<String, HostInfo> hosts, Map<String, SmuxInfo> smuxes, Path vtyDir) {
        this.file = file;
        this.name = name;
        this.topology = topology;
        this.ovsRundir = ovsRundir;
        this.vipTable = vipTable;
        this.cookie = cookie;
        this.cookieMask = cookieMask;
        this.groupIdBase = groupIdBase;
        this.locationRoute = locationRoute;
        this.fallbackTable = fallbackTable;
        this.locationWatchGroup = locationWatchGroup;
        this.switches = switches;
        this.hosts = hosts;
        this.smuxes = smuxes;
        this.vtyDir = vtyDir;
    }

    /** Whether VIP routes fail over to the SMuxes in the data path (see {@link #fallbackTable}). */
    public boolean fastFailover() {
        return fallbackTable != null && locationWatchGroup != null;
    }

    /** The group whose liveness says location {@code loc} is reachable ({@code locationWatchGroup}). */
    public long watchGroupOf(int loc) {
        return Long.decode(locationWatchGroup.replace("{location}", Integer.toString(loc)));
    }

    /** The route actions towards location {@code loc} (the fabric's {@code locationRoute} template). */
    public String routeTo(int loc) {
        return locationRoute.replace("{location}", Integer.toString(loc));
    }

    /** The location of an SMux: its host's, or the host with its address. */
    public int smuxLocation(Smux m) {
        SmuxInfo info = smuxes.get(m.id);
        if (info != null && info.host != null && hosts.containsKey(info.host)) {
            return hosts.get(info.host).location;
        }
        for (HostInfo h : hosts.values()) {
            if (h.ip.equals(m.ip)) {
                return h.location;
            }
        }
        throw new IllegalStateException("no location known for SMux " + m.id + " (" + m.ip + ")");
    }

    private static P4Switch p4Switch(Checker c, JsonNode s, String at, Path dir, Integer location) {
        JsonNode p = c.object(s, "p4", at.substring(0, at.lastIndexOf('/')), true);
        if (p == null) {
            return null;
        }
        String grpc = c.string(p, "grpc", at, null, true);
        if (grpc != null && !grpc.matches("unix:/.+|[A-Za-z0-9.\\-]+:[0-9]{1,5}|\\[[0-9a-fA-F:]+\\]:[0-9]{1,5}")) {
            c.problem(at + "/grpc", "must be unix:/path or host:port, got \"" + grpc + "\"");
        }
        long deviceId = c.integer(p, "deviceId", at, 1, 0, Long.MAX_VALUE);
        long electionId = c.integer(p, "electionId", at, DEFAULT_ELECTION_ID, 1, Long.MAX_VALUE);
        String profile = c.string(p, "profile", at, null, true);
        if (profile != null && !P4_PROFILES.contains(profile)) {
            c.problem(at + "/profile", "must be one of " + P4_PROFILES + ", got \"" + profile + "\"");
        }
        String info = c.string(p, "p4info", at, null, true);
        Path p4info = info == null ? null : dir.resolve(info).normalize();
        if (p4info != null && !Files.isReadable(p4info)) {
            c.problem(at + "/p4info", "cannot read " + p4info);
        }
        String encap = c.string(p, "encap", at, "gre", false);
        if (!"gre".equals(encap) && !"ipip".equals(encap)) {
            c.problem(at + "/encap", "must be gre or ipip, got \"" + encap + "\"");
        }
        long nextId = c.integer(p, "nextId", at, location == null ? 1 : location, 1, 0xffff);
        String atomicity = c.string(p, "atomicity", at, "dataplane-atomic", false);
        if (!P4Switch.ATOMICITIES.contains(atomicity)) {
            c.problem(at + "/atomicity", "must be one of " + P4Switch.ATOMICITIES + ", got \"" + atomicity + "\"");
            atomicity = "dataplane-atomic";
        }
        return new P4Switch(grpc, deviceId, electionId, profile, p4info,
                "ipip".equals(encap) ? HashContract.Encap.IPIP : HashContract.Encap.GRE, (int) nextId, atomicity);
    }

    public static Fabric load(Path file) {
        String name = file.toString();
        Checker c = new Checker(name);
        JsonNode root;
        try {
            root = DaemonConfig.STRICT.readTree(Files.readString(file));
        } catch (JsonProcessingException e) {
            throw new ConfigException(List.of(name + ": /: malformed JSON: " + e.getOriginalMessage()));
        } catch (IOException e) {
            throw new ConfigException(List.of(name + ": /: cannot read: " + e.getMessage()));
        }
        if (root == null || !root.isObject()) {
            throw new ConfigException(List.of(name + ": /: must be a JSON object"));
        }
        Path dir = file.toAbsolutePath().getParent();
        String fabricName = c.string(root, "name", "", "fabric", false);
        String topoFile = c.string(root, "topology", "", null, true);
        Topology topology = null;
        if (topoFile != null) {
            Path tp = dir.resolve(topoFile).normalize();
            try {
                topology = ModelIo.readTopology(tp);
            } catch (InvalidInputException e) {
                c.problem("/topology", e.getMessage());
            } catch (RuntimeException e) {
                c.problem("/topology", "cannot read " + tp + ": " + e.getMessage());
            }
        }
        JsonNode ovs = c.object(root, "ovs", "", true);
        String rundir = c.string(ovs, "rundir", "/ovs", null, true);
        JsonNode tables = c.object(root, "tables", "", false);
        int vipTable = (int) c.integer(tables, "vip", "/tables", 0, 0, 253);
        String cookieText = c.string(root, "controllerCookie", "", DEFAULT_CONTROLLER_COOKIE, false);
        long cookie = 0x4c420000L;
        long mask = 0xffff0000L;
        try {
            String[] parts = cookieText.split("/");
            cookie = Long.decode(parts[0]);
            mask = parts.length > 1 ? Long.decode(parts[1]) : 0xffffffffL;
            if (parts.length > 2 || (cookie & ~mask) != 0 || (mask & ~0xffffffffL) != 0) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            c.problem("/controllerCookie", "must be value/mask within the low 32 bits, value inside the mask, got \""
                    + cookieText + "\"");
        }
        long groupBase = c.integer(root, "controllerGroupIdBase", "", DEFAULT_GROUP_ID_BASE, 1,
                0xf0000000L - CONTROLLER_GROUP_SPAN);
        String locationRoute = c.string(root, "locationRoute", "", "load:{location}->NXM_NX_REG0[],resubmit(,2)", false);
        if (!locationRoute.contains("{location}")) {
            c.problem("/locationRoute", "must contain {location}");
        }
        Integer fallbackTable = tables != null && tables.has("fallback")
                ? (int) c.integer(tables, "fallback", "/tables", 0, 0, 253) : null;
        if (fallbackTable != null && fallbackTable == vipTable) {
            c.problem("/tables/fallback", "must differ from tables.vip (" + vipTable + ")");
        }
        String watch = c.string(root, "locationWatchGroup", "", null, false);
        if (watch != null) {
            try {
                long g = Long.decode(watch.replace("{location}", "1"));
                if (!watch.contains("{location}") || g < 0 || g > 0xffffff00L) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                c.problem("/locationWatchGroup", "must be a group id containing {location}, e.g. \"{location}\", got \""
                        + watch + "\"");
            }
        }
        if ((fallbackTable == null) != (watch == null)) {
            c.problem(watch == null ? "/locationWatchGroup" : "/tables/fallback",
                    "fast failover needs both tables.fallback and locationWatchGroup");
        }

        Map<String, SwitchInfo> switches = new LinkedHashMap<>();
        JsonNode sw = c.object(root, "switches", "", true);
        if (sw != null) {
            for (Iterator<Map.Entry<String, JsonNode>> it = sw.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String at = "/switches/" + e.getKey();
                JsonNode s = e.getValue();
                String bridge = c.string(s, "bridge", at, null, true);
                Integer loc = c.requiredInt(s, "location", at, 0, 0xffffffffL);
                JsonNode tun = c.object(s, "tunnel", at, false);
                Integer ofport = null;
                String prefix = "";
                if (tun != null) {
                    ofport = c.requiredInt(tun, "ofport", at + "/tunnel", 1, 0xfeff);
                    prefix = c.string(tun, "actionsPrefix", at + "/tunnel", "", false);
                }
                P4Switch p4 = s.has("p4") ? p4Switch(c, s, at + "/p4", dir, loc) : null;
                Map<String, Integer> ports = new LinkedHashMap<>();
                JsonNode ps = c.object(s, "ports", at, false);
                if (ps != null) {
                    ps.fieldNames().forEachRemaining(n -> ports.put(n, c.requiredInt(ps, n, at + "/ports", 1, 0xfeff)));
                }
                if (bridge != null && loc != null) {
                    switches.put(e.getKey(), new SwitchInfo(e.getKey(), bridge, loc, ofport, prefix, p4, ports));
                }
            }
        }
        Map<String, HostInfo> hosts = new LinkedHashMap<>();
        JsonNode hs = c.object(root, "hosts", "", true);
        if (hs != null) {
            for (Iterator<Map.Entry<String, JsonNode>> it = hs.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String at = "/hosts/" + e.getKey();
                JsonNode h = e.getValue();
                String ip = c.ipv4(h, "ip", at, true);
                Integer loc = c.requiredInt(h, "location", at, 0, 0xffffffffL);
                String role = c.string(h, "role", at, "", false);
                String agent = c.url(h, "agentUrl", at, false);
                if (ip != null && loc != null) {
                    hosts.put(e.getKey(), new HostInfo(e.getKey(), ip, loc, role, agent));
                }
            }
        }
        Map<String, SmuxInfo> smuxes = new LinkedHashMap<>();
        JsonNode sm = root.get("smuxes");
        if (sm != null && !sm.isArray()) {
            c.problem("/smuxes", "must be an array");
        } else if (sm != null) {
            for (int i = 0; i < sm.size(); i++) {
                String at = "/smuxes/" + i;
                JsonNode m = sm.get(i);
                String id = c.string(m, "id", at, null, true);
                String host = c.string(m, "host", at, null, false);
                String ip = c.ipv4(m, "ip", at, true);
                String control = c.url(m, "controlUrl", at, true);
                String peer = c.ipv4(m, "bgpPeer", at, false);
                if (host != null && !hosts.containsKey(host)) {
                    c.problem(at + "/host", "no host \"" + host + "\" in /hosts");
                }
                if (id != null) {
                    smuxes.put(id, new SmuxInfo(id, host, ip, control, peer));
                }
            }
        }
        JsonNode rs = c.object(root, "routeServer", "", false);
        String vty = c.string(rs, "vtyDir", "/routeServer", null, false);

        if (topology != null && c.ok()) {
            for (Switch s : topology.switches) {
                if (!switches.containsKey(s.id)) {
                    c.problem("/switches", "topology switch \"" + s.id + "\" has no entry");
                }
            }
            for (Smux m : topology.smuxes) {
                if (!smuxes.containsKey(m.id)) {
                    c.problem("/smuxes", "topology SMux \"" + m.id + "\" has no entry (controlUrl)");
                }
            }
            List<String> ips = new ArrayList<>();
            hosts.values().forEach(h -> ips.add(h.ip));
            for (Smux m : topology.smuxes) {
                SmuxInfo info = smuxes.get(m.id);
                boolean located = info != null && info.host != null || ips.contains(m.ip);
                if (!located) {
                    c.problem("/smuxes", "SMux \"" + m.id + "\" (" + m.ip + ") is on no host of /hosts");
                }
            }
            for (Host h : topology.hosts) {
                if (!ips.contains(h.ip)) {
                    // DIP hosts without a location cannot be reached by tunnels; note only
                    java.util.logging.Logger.getLogger(Fabric.class.getName())
                            .fine("topology host " + h.id + " has no entry in " + name);
                }
            }
        }
        c.throwIfAny();
        return new Fabric(file, fabricName, topology, Path.of(rundir), vipTable, cookie, mask, groupBase,
                locationRoute, fallbackTable, watch, switches, hosts, smuxes, vty == null ? null : dir.resolve(vty));
    }
}
