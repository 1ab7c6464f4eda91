package org.hybridlb.solver.cli;

import java.io.PrintWriter;

/**
 * A one-line progress bar on stderr ("\r[#####-----]  50% intervals 9/18"), redrawn at most
 * every 100 ms and when a phase completes. Disabled bars print nothing, so the same code runs
 * quietly under tests and in pipelines. Shared by the long-running subcommands.
 */
public final class ProgressBar {
    private static final int WIDTH = 30;
    private static final long REDRAW_NANOS = 100_000_000L;

    private final PrintWriter err;
    private final boolean enabled;
    private long lastDraw;
    private boolean drawn;

    public ProgressBar(PrintWriter err, boolean enabled) {
        this.err = err;
        this.enabled = enabled;
    }

    /** On when asked for, otherwise only when a person is watching a terminal. */
    public static boolean wanted(Boolean option) {
        return option != null ? option : System.console() != null;
    }

    public synchronized void update(String phase, long done, long total) {
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        boolean complete = done >= total;
        if (!complete && drawn && now - lastDraw < REDRAW_NANOS) {
            return;
        }
        lastDraw = now;
        drawn = true;
        double fraction = total <= 0 ? 1 : Math.min(1, (double) done / total);
        int filled = (int) Math.round(fraction * WIDTH);
        StringBuilder sb = new StringBuilder("\r[");
        for (int i = 0; i < WIDTH; i++) {
            sb.append(i < filled ? '#' : '-');
        }
        sb.append(String.format("] %3d%% %s %d/%d", Math.round(fraction * 100), phase, done, total));
        err.print(sb);
        if (complete) {
            err.println();
        }
        err.flush();
    }
}
