package org.hybridlb.solver.ilp;

/**
 * Tuning knobs of the exact solver, read from system properties ({@code -Dhlb.ilp.theta=0.5}):
 * a value out of its range is reported on stderr and the default kept, rather than failing the
 * class's initialisation with a stack trace.
 */
final class Tuning {
    private Tuning() {
    }

    static double positive(String property, double defaultValue) {
        String v = System.getProperty(property);
        if (v == null) {
            return defaultValue;
        }
        try {
            double d = Double.parseDouble(v.trim());
            if (d > 0 && Double.isFinite(d)) {
                return d;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        System.err.println("warning: -D" + property + "=" + v + " is not a positive number; using " + defaultValue);
        return defaultValue;
    }

    /** A share in (0, 1], or [0, 1] when {@code zeroAllowed}. */
    static double fraction(String property, double defaultValue, boolean zeroAllowed) {
        String v = System.getProperty(property);
        if (v == null) {
            return defaultValue;
        }
        try {
            double d = Double.parseDouble(v.trim());
            if ((zeroAllowed ? d >= 0 : d > 0) && d <= 1) {
                return d;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        System.err.println("warning: -D" + property + "=" + v + " is not a number in " + (zeroAllowed ? "[0, 1]"
                : "(0, 1]") + "; using " + defaultValue);
        return defaultValue;
    }

    static int positiveInt(String property, int defaultValue) {
        double d = positive(property, defaultValue);
        if (d != Math.rint(d) || d > Integer.MAX_VALUE) {
            System.err.println("warning: -D" + property + "=" + System.getProperty(property)
                    + " is not a whole number; using " + defaultValue);
            return defaultValue;
        }
        return (int) d;
    }
}
