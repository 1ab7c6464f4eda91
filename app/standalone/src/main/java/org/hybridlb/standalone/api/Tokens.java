package org.hybridlb.standalone.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.logging.Logger;

/**
 * The API tokens of hybridlbd: a JSON file that the config names, holding for each token its
 * name, its role and the SHA-256 of the token (never the token itself):
 * {@code {"tokens": [{"name": "ops", "role": "admin", "sha256": "<64 hex>"}]}}. Tokens are 256
 * random bits ({@link #newToken}), so a plain hash is as strong as the token. {@code hybridlb token
 * create} adds one. The file is read again when it changes (a token added or revoked takes effect
 * within a second, no restart); a change that does not parse is logged and the old tokens stay.
 */
public final class Tokens {
    private static final Logger LOG = Logger.getLogger(Tokens.class.getName());
    private static final ObjectMapper STRICT = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY).build();
    private static final SecureRandom RANDOM = new SecureRandom();
    static final String PREFIX = "hlb_";
    private static final long RECHECK_NANOS = 1_000_000_000L;

    /** What a token may do: a viewer reads (GET), an admin also writes. */
    public enum Role {
        VIEWER, ADMIN;

        public String json() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Role parse(String s) {
            for (Role r : values()) {
                if (r.json().equals(s)) {
                    return r;
                }
            }
            return null;
        }
    }

    /** One token of the file. */
    public static final class Entry {
        public final String name;
        public final Role role;
        /** The token's SHA-256, as 64 lowercase hex digits. */
        final byte[] sha256;

        Entry(String name, Role role, byte[] sha256) {
            this.name = name;
            this.role = role;
            this.sha256 = sha256;
        }
    }

    private final Path file;
    private volatile List<Entry> entries;
    private volatile FileTime loadedMtime;
    private volatile long checkedNanos;

    private Tokens(Path file, List<Entry> entries, FileTime mtime) {
        this.file = file;
        this.entries = entries;
        this.loadedMtime = mtime;
        this.checkedNanos = System.nanoTime();
    }

    /** Reads {@code file}; a problem is an {@link IllegalArgumentException} "file: /pointer: reason". */
    public static Tokens load(Path file) {
        FileTime mtime = mtime(file);
        List<Entry> entries = parse(file, read(file));
        if (entries.isEmpty()) {
            LOG.warning(file + ": no tokens: every request will be refused (401); add one with 'hybridlb token create'");
        }
        warnIfWritableByOthers(file);
        return new Tokens(file, entries, mtime);
    }

    public Path file() {
        return file;
    }

    /** The entry of {@code token}, or null. Compares hashes in constant time. */
    public Entry check(String token) {
        reloadIfChanged();
        byte[] h = hex(sha256(token)).getBytes(StandardCharsets.US_ASCII);
        Entry found = null;
        for (Entry e : entries) {
            if (MessageDigest.isEqual(h, e.sha256)) {
                found = e;
            }
        }
        return found;
    }

    private void reloadIfChanged() {
        long now = System.nanoTime();
        if (now - checkedNanos < RECHECK_NANOS) {
            return;
        }
        synchronized (this) {
            if (now - checkedNanos < RECHECK_NANOS) {
                return;
            }
            checkedNanos = now;
            FileTime m;
            try {
                m = mtime(file);
            } catch (IllegalArgumentException e) {
                LOG.warning(e.getMessage() + "; keeping the " + entries.size() + " tokens read before");
                return;
            }
            if (m.equals(loadedMtime)) {
                return;
            }
            try {
                entries = parse(file, read(file));
                LOG.info(file + ": re-read, " + entries.size() + " tokens");
            } catch (IllegalArgumentException e) {
                LOG.warning(e.getMessage() + "; keeping the " + entries.size() + " tokens read before");
            }
            loadedMtime = m;
        }
    }

    static List<Entry> parse(Path file, String text) {
        JsonNode root;
        try {
            root = STRICT.readTree(text);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": /: malformed JSON: " + e.getMessage().split("\n")[0]);
        }
        if (root == null || !root.isObject() || !root.path("tokens").isArray()) {
            throw new IllegalArgumentException(file + ": /tokens: an array of {name, role, sha256} is required");
        }
        List<Entry> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < root.get("tokens").size(); i++) {
            JsonNode t = root.get("tokens").get(i);
            String at = file + ": /tokens/" + i;
            String name = t.path("name").asText("");
            Role role = Role.parse(t.path("role").asText(""));
            String hex = t.path("sha256").asText("");
            if (name.isBlank()) {
                throw new IllegalArgumentException(at + "/name: a non-empty name is required");
            }
            if (!names.add(name)) {
                throw new IllegalArgumentException(at + "/name: duplicate name \"" + name + "\"");
            }
            if (role == null) {
                throw new IllegalArgumentException(at + "/role: must be \"viewer\" or \"admin\", got " + t.path("role"));
            }
            if (!hex.matches("[0-9a-f]{64}")) {
                throw new IllegalArgumentException(at + "/sha256: must be 64 lowercase hex digits (the token's SHA-256)");
            }
            out.add(new Entry(name, role, hex.getBytes(StandardCharsets.US_ASCII)));
        }
        return out;
    }

    /** A new random token: "hlb_" and 256 random bits, base64url. */
    public static String newToken() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String hex(byte[] b) {
        return String.format("%0" + (2 * b.length) + "x", new BigInteger(1, b));
    }

    /**
     * Adds a token named {@code name} with {@code role} to {@code file} (created, mode 0600, when
     * missing; replaced atomically) and returns the token, which is stored nowhere else.
     */
    public static String create(Path file, String name, Role role) {
        ObjectNode root = existing(file);
        ArrayNode list = (ArrayNode) root.get("tokens");
        for (JsonNode t : list) {
            if (name.equals(t.path("name").asText())) {
                throw new IllegalArgumentException(file + ": a token named \"" + name + "\" exists (revoke it first)");
            }
        }
        String token = newToken();
        list.addObject().put("name", name).put("role", role.json()).put("sha256", hex(sha256(token)));
        write(file, root);
        return token;
    }

    /** Removes the token named {@code name}; false when there is none. */
    public static boolean revoke(Path file, String name) {
        ObjectNode root = existing(file);
        ArrayNode list = (ArrayNode) root.get("tokens");
        for (int i = 0; i < list.size(); i++) {
            if (name.equals(list.get(i).path("name").asText())) {
                list.remove(i);
                write(file, root);
                return true;
            }
        }
        return false;
    }

    private static ObjectNode existing(Path file) {
        if (!Files.exists(file)) {
            ObjectNode root = STRICT.createObjectNode();
            root.putArray("tokens");
            return root;
        }
        parse(file, read(file));   // refuse to edit a file that does not parse
        try {
            return (ObjectNode) STRICT.readTree(read(file));
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage());
        }
    }

    private static void write(Path file, ObjectNode root) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.deleteIfExists(tmp);
            Files.createFile(tmp);
            try {
                Files.setPosixFilePermissions(tmp, Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system
            }
            Files.writeString(tmp, STRICT.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot write: " + e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": /: cannot read: " + e);
        }
    }

    private static FileTime mtime(Path file) {
        try {
            return Files.getLastModifiedTime(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": /: cannot read: " + e);
        }
    }

    private static void warnIfWritableByOthers(Path file) {
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
            if (p.contains(PosixFilePermission.OTHERS_WRITE) || p.contains(PosixFilePermission.GROUP_WRITE)) {
                LOG.warning(file + ": writable by others than its owner: whoever can write it can add an admin token");
            }
        } catch (IOException | UnsupportedOperationException e) {
            // nothing to say
        }
    }
}
