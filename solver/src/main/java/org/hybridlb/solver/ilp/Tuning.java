package org.hybridlb.solver.ilp;

/**
 * Tuning knobs of the exact solver, read from system properties ({@code -Dhlb.ilp.theta=0.5}):
 * a value that is not a positive number is reported on stderr and the default kept, rather than
 * failing the class's initialisation with a stack trace.
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
