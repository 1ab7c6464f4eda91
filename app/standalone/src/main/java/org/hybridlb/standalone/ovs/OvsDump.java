package org.hybridlb.standalone.ovs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses {@code ovs-ofctl -O OpenFlow15 dump-flows / dump-groups} text. */
public final class OvsDump {
    private OvsDump() {
    }

    /** One flow: cookie, table, priority, match fields (flags such as {@code tcp} map to ""), actions, counters. */
    public static final class Flow {
        public final long cookie;
        public final int table;
        public final int priority;
        public final Map<String, String> match;
        public final String actions;
        public final long packets;
        public final long bytes;

        Flow(long cookie, int table, int priority, Map<String, String> match, String actions, long packets, long bytes) {
            this.cookie = cookie;
            this.table = table;
            this.priority = priority;
            this.match = match;
            this.actions = actions;
            this.packets = packets;
            this.bytes = bytes;
        }

        /** The group this flow's actions end in, or -1. */
        public long group() {
            Matcher m = GROUP_ACTION.matcher(actions);
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        }
    }

    /** One bucket of a group. */
    public static final class Bucket {
        public final long id;
        public final int weight;
        public final String actions;

        Bucket(long id, int weight, String actions) {
            this.id = id;
            this.weight = weight;
            this.actions = actions;
        }
    }

    /** One group: id, type and buckets in order. */
    public static final class Group {
        public final long id;
        public final String type;
        public final String header;
        public final List<Bucket> buckets;

        Group(long id, String type, String header, List<Bucket> buckets) {
            this.id = id;
            this.type = type;
            this.header = header;
            this.buckets = buckets;
        }
    }

    private static final Pattern GROUP_ACTION = Pattern.compile("(?:^|,)group:(\\d+)");
    private static final java.util.Set<String> STAT_KEYS = java.util.Set.of("cookie", "duration", "table", "n_packets", "n_bytes",
            "idle_age", "hard_age", "priority", "idle_timeout", "hard_timeout", "importance", "reset_counts",
            "send_flow_rem", "check_overlap", "no_packet_counts", "no_byte_counts");

    public static List<Flow> flows(String text) {
        List<Flow> out = new ArrayList<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            int a = line.indexOf(" actions=");
            if (!line.startsWith("cookie=") || a < 0) {
                continue;
            }
            String left = line.substring(0, a);
            String actions = line.substring(a + " actions=".length());
            long cookie = 0;
            int table = 0;
            int priority = 32768;
            long packets = 0;
            long bytes = 0;
            Map<String, String> match = new LinkedHashMap<>();
            for (String tok : left.split(",")) {
                String t = tok.strip();
                if (t.isEmpty()) {
                    continue;
                }
                int eq = t.indexOf('=');
                String k = eq < 0 ? t : t.substring(0, eq);
                String v = eq < 0 ? "" : t.substring(eq + 1);
                switch (k) {
                    case "cookie": cookie = Long.parseUnsignedLong(v.substring(2), 16); break;
                    case "table": table = Integer.parseInt(v); break;
                    case "priority": priority = Integer.parseInt(v); break;
                    case "n_packets": packets = Long.parseLong(v); break;
                    case "n_bytes": bytes = Long.parseLong(v); break;
                    default:
                        if (!STAT_KEYS.contains(k)) {
                            match.put(k, v);
                        }
                }
            }
            out.add(new Flow(cookie, table, priority, match, actions, packets, bytes));
        }
        return out;
    }

    private static final Pattern GROUP_ID = Pattern.compile("group_id=(\\d+)");
    private static final Pattern TYPE = Pattern.compile("type=(\\w+)");
    private static final Pattern BUCKET_ID = Pattern.compile("bucket_id:(\\d+)");
    private static final Pattern WEIGHT = Pattern.compile("(?:^|,)weight:(\\d+)");

    public static Map<Long, Group> groups(String text) {
        Map<Long, Group> out = new LinkedHashMap<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (!line.startsWith("group_id=")) {
                continue;
            }
            String[] parts = line.split(",bucket=");
            Matcher id = GROUP_ID.matcher(parts[0]);
            Matcher type = TYPE.matcher(parts[0]);
            if (!id.find()) {
                continue;
            }
            List<Bucket> buckets = new ArrayList<>();
            for (int i = 1; i < parts.length; i++) {
                String b = parts[i];
                int a = b.indexOf("actions=");
                String head = a < 0 ? b : b.substring(0, a);
                String actions = a < 0 ? "" : b.substring(a + "actions=".length());
                Matcher bid = BUCKET_ID.matcher(head);
                Matcher w = WEIGHT.matcher(head);
                buckets.add(new Bucket(bid.find() ? Long.parseLong(bid.group(1)) : i - 1,
                        w.find() ? Integer.parseInt(w.group(1)) : 1, actions));
            }
            long gid = Long.parseLong(id.group(1));
            out.put(gid, new Group(gid, type.find() ? type.group(1) : "", parts[0], buckets));
        }
        return out;
    }
}
