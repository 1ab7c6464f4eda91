package org.hybridlb.solver.yoda;

import java.util.Locale;

/** The two variants compared in Yoda §8.2. */
public enum YodaMode {
    /** Congestion-free update: transient-traffic (Fig. 7 eqs. 4-5) and migrated-connection (6-7) limits. */
    LIMIT,
    /** Only capacity, rules and replicas (eqs. 1-3): fewest instances, no regard for the transition. */
    NO_LIMIT;

    public static YodaMode parse(String s) {
        String n = s.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        if (n.equals("limit")) {
            return LIMIT;
        }
        if (n.equals("no-limit") || n.equals("nolimit")) {
            return NO_LIMIT;
        }
        throw new IllegalArgumentException("--mode: '" + s + "' is not one of limit, no-limit");
    }

    public String cliName() {
        return this == LIMIT ? "limit" : "no-limit";
    }
}
