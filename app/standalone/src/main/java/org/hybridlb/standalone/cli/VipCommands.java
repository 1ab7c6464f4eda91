package org.hybridlb.standalone.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hybridlb vips}, {@code vip show|add|rm|load}, {@code dip add|rm}: the VIP configuration. */
final class VipCommands {
    private VipCommands() {
    }

    static String services(JsonNode vip) {
        StringBuilder b = new StringBuilder();
        for (JsonNode p : vip.path("ports")) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(p.path("proto").asText()).append('/').append(p.path("port").asInt())
                    .append(':').append(p.path("dips").size());
        }
        return b.toString();
    }

    static String dips(JsonNode vip) {
        java.util.Set<String> ips = new java.util.LinkedHashSet<>();
        for (JsonNode p : vip.path("ports")) {
            for (JsonNode d : p.path("dips")) {
                int w = d.path("weight").asInt(1);
                ips.add(d.path("ip").asText() + (w != 1 ? "*" + w : ""));
            }
        }
        return String.join(",", ips);
    }

    static String vipTable(JsonNode vips) {
        Table t = new Table("VIP", "AGGREGATE", "SERVICES (proto/port:DIPs)", "DIPS");
        for (JsonNode v : vips) {
            t.row(v.path("vip").asText(), v.path("aggregate").asText(null), services(v), dips(v));
        }
        return t.size() == 0 ? "no VIPs\n" : t.render();
    }

    @Command(name = "vips", description = "List the configured VIPs.")
    static final class Vips extends HybridlbCli.Sub {
        @Override
        JsonNode fetch() {
            return cli.call("GET", "/vips", null, 200);
        }

        @Override
        String render(JsonNode n) {
            return vipTable(n.path("vips"));
        }
    }

    @Command(name = "vip", description = "Show, add or remove a VIP.",
            subcommands = {VipShow.class, VipAdd.class, VipRm.class, VipLoad.class})
    static final class VipCmd extends HybridlbCli.Group {
    }

    abstract static class VipSub extends HybridlbCli.Sub {
    }

    @Command(name = "show", description = "Show one VIP with its DIPs.")
    static final class VipShow extends VipSub {
        @Parameters(index = "0", description = "the VIP address")
        String vip;

        @Override
        JsonNode fetch() {
            return cli.call("GET", "/vips/" + HybridlbCli.enc(vip), null, 200);
        }

        @Override
        String render(JsonNode v) {
            Table t = new Table("SERVICE", "DIP", "WEIGHT", "HOST");
            for (JsonNode p : v.path("ports")) {
                for (JsonNode d : p.path("dips")) {
                    t.row(p.path("proto").asText() + "/" + p.path("port").asInt(), d.path("ip").asText(),
                            d.path("weight").asInt(1), d.path("hostIp").asText(null));
                }
            }
            return "VIP " + v.path("vip").asText() + " (aggregate " + v.path("aggregate").asText("-") + ")\n" + t.render();
        }
    }

    @Command(name = "add", description = "Add a VIP: hybridlb vip add 10.100.0.1 --aggregate 10.100.0.0/16 "
            + "--service tcp/80 --dip 10.0.0.2 --dip 10.0.0.3*2 [--affinity cheetah [--mechanism rr] [--cookie-hash crc32c]] (or --file vip.json).")
    static final class VipAdd extends VipSub {
        @Parameters(index = "0", arity = "0..1", description = "the VIP address")
        String vip;

        @Option(names = "--aggregate", description = "the aggregate prefix the SMuxes announce")
        String aggregate;

        @Option(names = "--service", description = "proto/port (tcp/80, udp/53, any/0); default any/0",
                defaultValue = "any/0")
        String service;

        @Option(names = "--dip", description = "DIP address, optionally *weight or @hostIp (repeat)")
        List<String> dips;

        @Option(names = "--affinity", description = "hash (default), cheetah or cheetah-stateful: what keeps a connection on its DIP")
        String affinity;

        @Option(names = "--mechanism", description = "wrr (default), rr, hash, p2c, least-loaded or awrr: how a cheetah VIP's SYNs pick a DIP")
        String mechanism;

        @Option(names = "--cookie-hash", description = "siphash13 (default) or crc32c: the keyed hash a cheetah VIP's"
                + " hosts write its cookies with, fixed for its life; crc32c only for a VIP a CRC-only P4 HMux must"
                + " decode (linear: a client that saw one cookie can aim any tuple at the same server)")
        String cookieHash;

        @Option(names = "--file", description = "the VIP as JSON (solver schema); replaces the other options")
        Path file;

        @Override
        JsonNode fetch() throws IOException {
            String body;
            if (file != null) {
                body = Files.readString(file);
            } else {
                if (vip == null || aggregate == null || dips == null) {
                    throw new HybridlbCli.Failure(2, "hybridlb: vip add needs VIP, --aggregate and at least one --dip (or --file)");
                }
                ObjectNode v = HybridlbCli.JSON.createObjectNode();
                v.put("vip", vip);
                v.put("aggregate", aggregate);
                if (affinity != null) {
                    v.put("affinity", affinity); // checked by the controller, which names the field
                }
                if (mechanism != null) {
                    v.put("mechanism", mechanism);
                }
                if (cookieHash != null) {
                    v.put("cookieHash", cookieHash);
                }
                ObjectNode port = v.putArray("ports").addObject();
                String[] pp = service.split("/");
                port.put("proto", pp[0]);
                try {
                    port.put("port", pp.length > 1 ? Integer.parseInt(pp[1]) : 0);
                } catch (NumberFormatException e) {
                    throw new HybridlbCli.Failure(2, "hybridlb: --service must be proto/port, got " + service);
                }
                ArrayNode ds = port.putArray("dips");
                for (String d : dips) {
                    ds.add(dipNode(d));
                }
                body = HybridlbCli.JSON.writeValueAsString(v);
            }
            return cli.call("POST", "/vips", body, 201);
        }

        @Override
        String render(JsonNode n) {
            return "added VIP " + n.path("vip").asText() + "\n" + vipTable(HybridlbCli.JSON.createArrayNode().add(n));
        }
    }

    static ObjectNode dipNode(String spec) {
        String s = spec;
        String hostIp = null;
        Integer weight = null;
        int at = s.indexOf('@');
        if (at >= 0) {
            hostIp = s.substring(at + 1);
            s = s.substring(0, at);
        }
        int star = s.indexOf('*');
        if (star >= 0) {
            try {
                weight = Integer.parseInt(s.substring(star + 1));
            } catch (NumberFormatException e) {
                throw new HybridlbCli.Failure(2, "hybridlb: DIP weight must be an integer in " + spec);
            }
            s = s.substring(0, star);
        }
        ObjectNode d = HybridlbCli.JSON.createObjectNode().put("ip", s);
        if (weight != null) {
            d.put("weight", weight);
        }
        if (hostIp != null) {
            d.put("hostIp", hostIp);
        }
        return d;
    }

    @Command(name = "rm", description = "Remove a VIP.")
    static final class VipRm extends VipSub {
        @Parameters(index = "0", description = "the VIP address")
        String vip;

        @Override
        JsonNode fetch() {
            cli.call("DELETE", "/vips/" + HybridlbCli.enc(vip), null, 204, 200);
            return HybridlbCli.JSON.createObjectNode().put("removed", vip);
        }

        @Override
        String render(JsonNode n) {
            return "removed VIP " + vip + "\n";
        }
    }

    @Command(name = "load", description = "Replace the whole configuration with a VIP file ({\"vips\": [...]}).")
    static final class VipLoad extends VipSub {
        @Parameters(index = "0", description = "the VIP file")
        Path file;

        @Override
        JsonNode fetch() throws IOException {
            return cli.call("PUT", "/vips", Files.readString(file), 200);
        }

        @Override
        String render(JsonNode n) {
            return "configuration replaced: " + n.path("vips").size() + " VIPs\n";
        }
    }

    @Command(name = "dip", description = "Add or remove a DIP of a VIP.", subcommands = {DipAdd.class, DipRm.class})
    static final class DipCmd extends HybridlbCli.Group {
    }

    abstract static class DipSub extends HybridlbCli.Sub {
        @Parameters(index = "0", description = "the VIP address")
        String vip;

        @Parameters(index = "1", description = "the DIP address")
        String dip;

        @Option(names = "--service", description = "proto/port of the service (default: every service)")
        String service;

        @Override
        String render(JsonNode n) {
            return vipTable(HybridlbCli.JSON.createArrayNode().add(n));
        }
    }

    @Command(name = "add", description = "Add a DIP to a VIP (through the SMuxes when the VIP is on an HMux).")
    static final class DipAdd extends DipSub {
        @Option(names = "--weight", description = "bucket weight")
        Integer weight;

        @Option(names = "--host-ip", description = "tunnel endpoint when the DIP is not a host address")
        String hostIp;

        @Override
        JsonNode fetch() throws IOException {
            ObjectNode d = HybridlbCli.JSON.createObjectNode().put("ip", dip);
            if (weight != null) {
                d.put("weight", weight);
            }
            if (hostIp != null) {
                d.put("hostIp", hostIp);
            }
            if (service != null) {
                String[] pp = service.split("/");
                d.put("proto", pp[0]);
                if (pp.length > 1) {
                    try {
                        d.put("port", Integer.parseInt(pp[1]));
                    } catch (NumberFormatException e) {
                        throw new HybridlbCli.Failure(2, "hybridlb: --service must be proto/port, got " + service);
                    }
                }
            }
            return cli.call("POST", "/vips/" + HybridlbCli.enc(vip) + "/dips", HybridlbCli.JSON.writeValueAsString(d), 201);
        }
    }

    @Command(name = "rm", description = "Remove a DIP from a VIP.")
    static final class DipRm extends DipSub {
        @Override
        JsonNode fetch() {
            String q = "";
            if (service != null) {
                String[] pp = service.split("/");
                q = "?proto=" + HybridlbCli.enc(pp[0]) + (pp.length > 1 ? "&port=" + HybridlbCli.enc(pp[1]) : "");
            }
            return cli.call("DELETE", "/vips/" + HybridlbCli.enc(vip) + "/dips/" + HybridlbCli.enc(dip) + q, null, 200);
        }
    }
}
