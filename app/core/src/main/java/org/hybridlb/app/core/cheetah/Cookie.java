package org.hybridlb.app.core.cheetah;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.zip.CRC32C;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Vip;

/**
 * The Cheetah cookie of {@code p4/COOKIE-SPEC.md}, the controller's copy (the section numbers
 * below are the spec's). The controller allocates the server ids (§4) and keys (§8) the host
 * agents encode with and the SMuxes decode with; this class is the one place the Java side
 * computes a cookie, so its tests hold it to the spec's shared vectors.
 */
public final class Cookie {
    /** §4: server ids are 1..16383 (14 bits); 0 is never allocated. */
    public static final int SERVER_ID_MIN = 1;
    public static final int SERVER_ID_MAX = (1 << 14) - 1;
    /** §2: 15 cookie bits in TSval bits 30..16. */
    public static final int COOKIE_MASK = (1 << 15) - 1;
    /** §8: keys are 128 bits. */
    public static final int KEY_BYTES = 16;

    /**
     * The mode the host agents encode a VIP's cookies with unless the VIP names another, and their
     * default for other prefixes: SipHash-1-3, the keyed PRF (§5). A switch that has only CRC-32C
     * (the P4 programs) cannot decode these cookies.
     */
    public static final HashMode DEFAULT_MODE = HashMode.SIPHASH13;

    private static final int IPPROTO_TCP = 6;
    private static final long U32 = 0xFFFFFFFFL;

    private Cookie() {
    }

    /** §5 keyed hash modes, by the names the SMux table and host agent use. */
    public enum HashMode {
        SIPHASH13("siphash13"), CRC32C("crc32c");

        private final String wireName;

        HashMode(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }
    }

    /**
     * The mode the hosts encode {@code v}'s cookies with, and so the one a mux must decode to hold
     * it: its {@code cookieHash} ({@code crc32c} only for VIPs a CRC-only P4 HMux must decode, §5),
     * {@link #DEFAULT_MODE} when it names none.
     */
    public static HashMode modeOf(Vip v) {
        return Vip.COOKIE_HASH_CRC32C.equals(v.cookieHash) ? HashMode.CRC32C : DEFAULT_MODE;
    }

    /** §3: VIP(4) | proto 6 (1) | VIP port(2) | client(4) | client port(2), network order. */
    public static byte[] tuple(String vip, int vipPort, String client, int clientPort) {
        return ByteBuffer.allocate(13).putInt(Ipv4.parse(vip)).put((byte) IPPROTO_TCP)
                .putShort((short) vipPort).putInt(Ipv4.parse(client)).putShort((short) clientPort)
                .array();
    }

    /** §5: H(key, tuple) as an unsigned 64-bit value in a long (crc32c: zero-extended). */
    public static long hash(HashMode mode, byte[] key, byte[] tuple) {
        checkKey(key);
        if (mode == HashMode.SIPHASH13) {
            return sipHash13(key, tuple);
        }
        CRC32C crc = new CRC32C();
        crc.update(key);
        crc.update(tuple);
        return crc.getValue();
    }

    /** §5: cookie = ident XOR H15. */
    public static int cookie(HashMode mode, byte[] key, byte[] tuple, int ident) {
        if (ident < 0 || ident > COOKIE_MASK) {
            throw new IllegalArgumentException("ident: 15 bits, got " + ident);
        }
        return (int) ((ident ^ hash(mode, key, tuple)) & COOKIE_MASK);
    }

    /** §5: ident = cookie XOR H15 (the XOR is its own inverse). */
    public static int decodeIdent(HashMode mode, byte[] key, byte[] tuple, int cookie) {
        return (int) ((cookie ^ hash(mode, key, tuple)) & COOKIE_MASK);
    }

    /** §2: the TSval on the wire: version (bit 16 of the original) | cookie | low 16 bits. */
    public static long encodeTsval(long tsval, int cookie) {
        long version = (tsval >>> 16) & 1;
        return version << 31 | (long) (cookie & COOKIE_MASK) << 16 | (tsval & 0xFFFF);
    }

    /** §2: the cookie bits of a wire TSval or of the TSecr echoing it. */
    public static int cookieOf(long wire) {
        return (int) ((wire >>> 16) & COOKIE_MASK);
    }

    /** §6: the original TSval {@code wireTsecr} echoes, given the newest original TSval sent. */
    public static long restoreTsecr(long wireTsecr, long lastSent) {
        long version = (wireTsecr >>> 31) & 1;
        long hi = (lastSent >>> 16) & 0xFFFF;
        hi = (hi - ((hi ^ version) & 1)) & 0xFFFF;
        long cand = hi << 16 | (wireTsecr & 0xFFFF);
        if ((int) (cand - lastSent) > 0) {          // cannot echo what was never sent
            cand = (cand - (1L << 17)) & U32;
        }
        return cand;
    }

    /** §8: 32 hex digits -> 16 bytes; IllegalArgumentException with the reason otherwise. */
    public static byte[] parseKey(String text) {
        if (text == null || text.length() != 2 * KEY_BYTES) {
            throw new IllegalArgumentException("expected 32 hex digits");
        }
        byte[] key = new byte[KEY_BYTES];
        for (int i = 0; i < KEY_BYTES; i++) {
            int hi = Character.digit(text.charAt(2 * i), 16);
            int lo = Character.digit(text.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new IllegalArgumentException("expected 32 hex digits");
            }
            key[i] = (byte) (hi << 4 | lo);
        }
        return key;
    }

    /** §8: the key as 32 lower-case hex digits. */
    public static String formatKey(byte[] key) {
        checkKey(key);
        StringBuilder s = new StringBuilder(2 * KEY_BYTES);
        for (byte b : key) {
            s.append(String.format(Locale.ROOT, "%02x", b & 0xFF));
        }
        return s.toString();
    }

    /**
     * §8: what APIs show in place of a key: SipHash-1-3 of 13 zero bytes under it, 16 hex
     * digits most significant first, cut to the first 8.
     */
    public static String fingerprint(byte[] key) {
        checkKey(key);
        return String.format(Locale.ROOT, "%016x", sipHash13(key, new byte[13])).substring(0, 8);
    }

    private static void checkKey(byte[] key) {
        if (key == null || key.length != KEY_BYTES) {
            throw new IllegalArgumentException("key: 16 bytes expected");
        }
    }

    /**
     * SipHash-1-3 (one compression round per 8-byte word, three finalization rounds): k0, k1
     * and the message words read little-endian, the last word carrying the length in its
     * top byte.
     */
    static long sipHash13(byte[] key, byte[] data) {
        ByteBuffer k = ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN);
        long k0 = k.getLong(0);
        long k1 = k.getLong(8);
        long[] v = {k0 ^ 0x736F6D6570736575L, k1 ^ 0x646F72616E646F6DL,
                    k0 ^ 0x6C7967656E657261L, k1 ^ 0x7465646279746573L};
        ByteBuffer d = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        int whole = data.length - data.length % 8;
        for (int i = 0; i < whole; i += 8) {
            compress(v, d.getLong(i));
        }
        long last = (long) (data.length & 0xFF) << 56;
        for (int i = whole; i < data.length; i++) {
            last |= (long) (data[i] & 0xFF) << (8 * (i - whole));
        }
        compress(v, last);
        v[2] ^= 0xFF;
        for (int r = 0; r < 3; r++) {
            sipRound(v);
        }
        return v[0] ^ v[1] ^ v[2] ^ v[3];
    }

    private static void compress(long[] v, long m) {
        v[3] ^= m;
        sipRound(v);
        v[0] ^= m;
    }

    private static void sipRound(long[] v) {
        v[0] += v[1];
        v[1] = Long.rotateLeft(v[1], 13) ^ v[0];
        v[0] = Long.rotateLeft(v[0], 32);
        v[2] += v[3];
        v[3] = Long.rotateLeft(v[3], 16) ^ v[2];
        v[0] += v[3];
        v[3] = Long.rotateLeft(v[3], 21) ^ v[0];
        v[2] += v[1];
        v[1] = Long.rotateLeft(v[1], 17) ^ v[2];
        v[2] = Long.rotateLeft(v[2], 32);
    }
}
