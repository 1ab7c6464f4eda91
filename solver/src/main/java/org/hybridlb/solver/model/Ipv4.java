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
        return format(parse(prefix.substring(0, slash)) & mask(prefix)) + prefix.substring(slash);
    }

    /** True when {@code address} lies inside {@code prefix} ("a.b.c.d/len"). */
    public static boolean contains(String prefix, String address) {
        int mask = mask(prefix);
        return (parse(address) & mask) == (parse(prefix.substring(0, prefix.indexOf('/'))) & mask);
    }

    /**
     * True for an address a host can have, as the SMux takes it for a VIP or a DIP: not
     * 0.0.0.0, loopback (127/8), multicast (224/4) or reserved (240/4, with broadcast).
     */
    public static boolean isUnicastHost(String address) {
        int a = parse(address);
        return a != 0 && (a >>> 24) != 127 && (a >>> 28) < 0xe;
    }

    private static int mask(String prefix) {
        int len = Integer.parseInt(prefix.substring(prefix.indexOf('/') + 1));
        return len == 0 ? 0 : -1 << (32 - len);
    }
}
