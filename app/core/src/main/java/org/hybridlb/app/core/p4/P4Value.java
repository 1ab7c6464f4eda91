package org.hybridlb.app.core.p4;

import java.util.Arrays;

/**
 * A P4Runtime bytestring in its canonical form (P4Runtime 1.3 §8.4: big-endian, no leading zero
 * bytes, at least one byte), so that values compare equal whatever padding a device returns.
 */
public final class P4Value implements Comparable<P4Value> {
    private final byte[] bytes;

    private P4Value(byte[] canonical) {
        this.bytes = canonical;
    }

    /** The value of {@code bytes} (any padding). */
    public static P4Value of(byte[] bytes) {
        int i = 0;
        while (i < bytes.length - 1 && bytes[i] == 0) {
            i++;
        }
        return new P4Value(bytes.length == 0 ? new byte[1] : Arrays.copyOfRange(bytes, i, bytes.length));
    }

    /** An unsigned value. */
    public static P4Value of(long unsigned) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (unsigned >>> (56 - 8 * i));
        }
        return of(b);
    }

    /** A dotted IPv4 address. */
    public static P4Value ipv4(String address) {
        return of(org.hybridlb.solver.model.Ipv4.parse(address) & 0xffffffffL);
    }

    public byte[] bytes() {
        return bytes.clone();
    }

    /** The value as an unsigned long; throws if it needs more than 64 bits. */
    public long asLong() {
        if (bytes.length > 8) {
            throw new ArithmeticException("a " + bytes.length + "-byte value does not fit a long");
        }
        long v = 0;
        for (byte b : bytes) {
            v = v << 8 | (b & 0xff);
        }
        return v;
    }

    /** The value as a dotted IPv4 address (its low 32 bits). */
    public String asIpv4() {
        return org.hybridlb.solver.model.Ipv4.format((int) asLong());
    }

    /** The number of bits the value needs (0 for zero): it fits a field at least that wide. */
    public int bitLength() {
        return new java.math.BigInteger(1, bytes).bitLength();
    }

    @Override
    public int compareTo(P4Value o) {
        return bytes.length != o.bytes.length ? Integer.compare(bytes.length, o.bytes.length)
                : Arrays.compareUnsigned(bytes, o.bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof P4Value && Arrays.equals(bytes, ((P4Value) o).bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("0x");
        for (byte b : bytes) {
            s.append(String.format("%02x", b & 0xff));
        }
        return s.toString();
    }
}
