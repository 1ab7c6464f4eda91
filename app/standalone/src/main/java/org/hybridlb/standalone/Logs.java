package org.hybridlb.standalone;

import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/** One line per log record on stderr: time, level, message (and the stack trace of a cause). */
public final class Logs {
    // java.util.logging keeps loggers weakly: hold the ones configured here
    private static final Logger JERSEY = Logger.getLogger("org.glassfish");

    private Logs() {
    }

    public static void setUp() {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %5$s%6$s%n");
        }
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        ConsoleHandler h = new ConsoleHandler();
        h.setFormatter(new SimpleFormatter());
        String level = System.getenv().getOrDefault("HYBRIDLBD_LOG", "INFO");
        Level l;
        try {
            l = Level.parse(level.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            l = Level.INFO;
        }
        h.setLevel(l);
        root.setLevel(l);
        root.addHandler(h);
        JERSEY.setLevel(Level.SEVERE); // startup notes about optional providers
    }
}
