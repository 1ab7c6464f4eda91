package org.hybridlb.app.core.cheetah;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.hybridlb.app.core.cheetah.Cookie.HashMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java cookie against the spec's one source of truth: every row of the committed vectors
 * ({@code p4/vectors/cookie_vectors.csv}) and 10,000 more rows the Python reference model writes
 * at test time from a seed of its own, and the key fingerprint against the host agent's.
 */
class CookieTest {
    static final Path REPO = Path.of(System.getProperty("user.dir")).resolve("../..").normalize();
    static final Path VECTORS = REPO.resolve("p4/vectors/cookie_vectors.csv");
    static final Path GENERATOR = REPO.resolve("p4/model/gen_cookie_vectors.py");

    @Test
    void everyCommittedVector() throws IOException {
        List<String> lines = Files.readAllLines(VECTORS);
        int rows = checkAll(lines);
        assertTrue(rows >= 400, "the committed file holds the fixed and random rows: " + rows);
    }

    @Test
    void tenThousandRandomRowsFromTheModel(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("random.csv");
        run(out, "python3", GENERATOR.toString(), "--random", "10000", "--seed", "1907", "--no-fixed");
        List<String> lines = Files.readAllLines(out);
        int rows = checkAll(lines);
        assertEquals(10_000, rows);
        long crc = lines.stream().filter(l -> l.contains(",crc32c,")).count();
        assertTrue(crc > 500, "both modes drawn: " + crc + " crc32c rows");
    }

    @Test
    void fingerprintIsTheHostAgents(@TempDir Path dir) throws Exception {
        Map<String, String> expected = new TreeMap<>();
        Set<String> distinct = new LinkedHashSet<>();
        for (String line : Files.readAllLines(VECTORS)) {
            if (!line.startsWith("#") && !line.startsWith("seq,")) {
                distinct.add(line.split(",")[2]);
            }
        }
        List<String> keys = new ArrayList<>(distinct).subList(0, 50);
        List<String> cmd = new ArrayList<>(List.of("python3", "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); import cookie_config as c\n"
                        + "for k in sys.argv[2:]: print(k, c.fingerprint(bytes.fromhex(k)))",
                REPO.resolve("smux/agent").toString()));
        cmd.addAll(keys);
        Path out = dir.resolve("fp.txt");
        run(out, cmd.toArray(new String[0]));
        for (String line : Files.readAllLines(out)) {
            String[] kv = line.split(" ");
            expected.put(kv[0], kv[1]);
        }
        assertEquals(50, expected.size(), "distinct keys: " + expected.size());
        expected.forEach((key, fp) -> assertEquals(fp, Cookie.fingerprint(Cookie.parseKey(key)), key));
    }

    @Test
    void keysParseAndFormat() {
        byte[] key = Cookie.parseKey("000102030405060708090A0B0C0D0E0F");
        assertEquals("000102030405060708090a0b0c0d0e0f", Cookie.formatKey(key));
        assertArrayEquals(key, Cookie.parseKey(Cookie.formatKey(key)));
        for (String bad : new String[] {"", "00", "000102030405060708090a0b0c0d0e0g",
                                        "000102030405060708090a0b0c0d0e0f00", " 00102030405060708090a0b0c0d0e0f"}) {
            assertThrows(IllegalArgumentException.class, () -> Cookie.parseKey(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> Cookie.cookie(HashMode.SIPHASH13, key,
                Cookie.tuple("10.0.0.1", 80, "10.0.0.2", 1), 1 << 15));
    }

    /** Checks every data row of a §12 vector file; returns how many. */
    private static int checkAll(List<String> lines) {
        assertTrue(lines.get(0).startsWith("#"), "comment line");
        assertEquals("seq,mode,key,vip,vip_port,client,client_port,ident,hash,cookie,tsval,wire_tsval,"
                + "last_sent,wire_tsecr,tsecr", lines.get(1));
        int n = 0;
        for (String line : lines.subList(2, lines.size())) {
            check(line.split(",", -1));
            n++;
        }
        return n;
    }

    private static void check(String[] f) {
        String row = String.join(",", f);
        HashMode mode = "siphash13".equals(f[1]) ? HashMode.SIPHASH13 : HashMode.CRC32C;
        assertEquals(f[1], mode.wireName(), row);
        byte[] key = Cookie.parseKey(f[2]);
        byte[] tuple = Cookie.tuple(f[3], Integer.parseInt(f[4]), f[5], Integer.parseInt(f[6]));
        int ident = Integer.parseInt(f[7]);
        assertEquals(Long.parseUnsignedLong(f[8], 16), Cookie.hash(mode, key, tuple), "hash " + row);
        int cookie = Cookie.cookie(mode, key, tuple, ident);
        assertEquals(Integer.parseInt(f[9]), cookie, "cookie " + row);
        assertEquals(Long.parseLong(f[11], 16), Cookie.encodeTsval(Long.parseLong(f[10], 16), cookie),
                "wire_tsval " + row);
        long wireTsecr = Long.parseLong(f[13], 16);
        assertEquals(ident, Cookie.decodeIdent(mode, key, tuple, Cookie.cookieOf(wireTsecr)), "ident " + row);
        assertEquals(Long.parseLong(f[14], 16), Cookie.restoreTsecr(wireTsecr, Long.parseLong(f[12], 16)),
                "tsecr " + row);
    }

    private static void run(Path out, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.PIPE).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "python3 finished");
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + err);
    }
}
