package org.hybridlb.standalone;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.hybridlb.solver.model.Ipv4;

/**
 * Reads typed fields out of a JSON tree and collects every problem as
 * {@code file: /pointer: reason}, so a config file is judged in one pass.
 */
final class Checker {
    private final String file;
    private final List<String> problems = new ArrayList<>();

    Checker(String file) {
        this.file = file;
    }

    void problem(String pointer, String reason) {
        problems.add(file + ": " + (pointer.isEmpty() ? "/" : pointer) + ": " + reason);
    }

    boolean ok() {
        return problems.isEmpty();
    }

    void throwIfAny() {
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
    }

    /** Refuses members of {@code obj} not in {@code known}. */
    void onlyKnown(JsonNode obj, String at, Set<String> known) {
        if (obj == null || !obj.isObject()) {
            return;
        }
        for (Iterator<String> it = obj.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                problem(at + "/" + f, "unknown field (known: " + String.join(", ", new java.util.TreeSet<>(known)) + ")");
            }
        }
    }

    JsonNode object(JsonNode parent, String name, String at, boolean required) {
        JsonNode n = parent == null ? null : parent.get(name);
        if (n == null || n.isNull()) {
            if (required) {
                problem(at + "/" + name, "missing (required)");
            }
            return null;
        }
        if (!n.isObject()) {
            problem(at + "/" + name, "must be an object");
            return null;
        }
        return n;
    }

    String string(JsonNode parent, String name, String at, String dflt, boolean required) {
        JsonNode n = parent == null ? null : parent.get(name);
        if (n == null || n.isNull()) {
            if (required) {
                problem(at + "/" + name, "missing (required)");
            }
            return dflt;
        }
        if (!n.isTextual() || n.asText().isBlank()) {
            problem(at + "/" + name, "must be a non-empty string");
            return dflt;
        }
        return n.asText();
    }

    long integer(JsonNode parent, String name, String at, long dflt, long min, long max) {
        JsonNode n = parent == null ? null : parent.get(name);
        if (n == null || n.isNull()) {
            return dflt;
        }
        if (!n.isIntegralNumber() || n.asLong() < min || n.asLong() > max) {
            problem(at + "/" + name, "must be an integer from " + min + " to " + max + ", got " + n);
            return dflt;
        }
        return n.asLong();
    }

    Integer requiredInt(JsonNode parent, String name, String at, long min, long max) {
        JsonNode n = parent == null ? null : parent.get(name);
        if (n == null || n.isNull()) {
            problem(at + "/" + name, "missing (required)");
            return null;
        }
        if (!n.isIntegralNumber() || n.asLong() < min || n.asLong() > max) {
            problem(at + "/" + name, "must be an integer from " + min + " to " + max + ", got " + n);
            return null;
        }
        return n.asInt();
    }

    String ipv4(JsonNode parent, String name, String at, boolean required) {
        String s = string(parent, name, at, null, required);
        if (s != null && !isIpv4(s)) {
            problem(at + "/" + name, "value \"" + s + "\" is not an IPv4 address");
            return null;
        }
        return s;
    }

    String url(JsonNode parent, String name, String at, boolean required) {
        String s = string(parent, name, at, null, required);
        if (s != null && !(s.startsWith("http://") || s.startsWith("https://"))) {
            problem(at + "/" + name, "value \"" + s + "\" is not an http:// URL");
            return null;
        }
        return s;
    }

    static boolean isIpv4(String s) {
        try {
            Ipv4.parse(s);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }
}
