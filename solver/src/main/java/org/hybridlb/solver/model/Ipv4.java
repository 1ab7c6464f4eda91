package org.hybridlb.solver.model;

/** Dotted-quad IPv4 helpers (addresses as unsigned 32-bit values in an int). */
public final class Ipv4 {
    private Ipv4() {
    }

    /** Parses "a.b.c.d"; throws IllegalArgumentException with the reason otherwise. */
    public static int parse(String text) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("'" + text + "' is not an IPv4 address");
        }
        int value = 0;
        for (String p : parts) {
            int octet;
            try {
                octet = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + text + "' is not an IPv4 address");
            }
            if (octet < 0 || octet > 255 || p.isEmpty() || (p.length() > 1 && p.charAt(0) == '0')) {
                throw new IllegalArgumentException("'" + text + "' is not an IPv4 address");
            }
            value = (value << 8) | octet;
        }
        return value;
    }

    public static String format(int address) {
        return ((address >>> 24) & 0xff) + "." + ((address >>> 16) & 0xff) + "."
                + ((address >>> 8) & 0xff) + "." + (address & 0xff);
    }

    /** The network of {@code prefix} ("a.b.c.d/len") with its host bits cleared, as "a.b.c.d/len". */
    public static String network(String prefix) {
        int slash = prefix.indexOf('/');
        int len = Integer.parseInt(prefix.substring(slash + 1));
        int mask = len == 0 ? 0 : -1 << (32 - len);
        return format(parse(prefix.substring(0, slash)) & mask) + "/" + len;
    }

    /** True when {@code address} lies inside {@code prefix} ("a.b.c.d/len"). */
    public static boolean contains(String prefix, String address) {
        int slash = prefix.indexOf('/');
        int len = Integer.parseInt(prefix.substring(slash + 1));
        int net = parse(prefix.substring(0, slash));
        int mask = len == 0 ? 0 : -1 << (32 - len);
        return (parse(address) & mask) == (net & mask);
    }
}
