package org.hybridlb.solver.assign;

/**
 * Knobs of the assignment algorithms, with Duet's defaults. Immutable; {@code with*} copies.
 */
public final class SolverOptions {
    /** Links count against this fraction of their bandwidth (Duet §3.4: 80%). */
    public static final double DEFAULT_LINK_HEADROOM = 0.8;
    /** Sticky moves a VIP only if the MRU drops by more than this (Duet §3.8.6). */
    public static final double DEFAULT_STICKY_DELTA = 0.05;
    /** SMux capacity observed in production (Duet §3.2.2): 300K pkt/s of 1,500 bytes. */
    public static final double DEFAULT_SMUX_CAPACITY_BPS = 3.6e9;

    public final double linkHeadroom;
    public final double stickyDelta;
    public final boolean podShortcut;
    public final boolean stopAtFirstUnfit;
    public final long seed;
    public final double smuxCapacityBps;

    public SolverOptions(double linkHeadroom, double stickyDelta, boolean podShortcut,
                         boolean stopAtFirstUnfit, long seed, double smuxCapacityBps) {
        if (!(linkHeadroom > 0 && linkHeadroom <= 1)) {
            throw new IllegalArgumentException("linkHeadroom must be in (0, 1], got " + linkHeadroom);
        }
        if (!(stickyDelta >= 0 && stickyDelta < 1)) {
            throw new IllegalArgumentException("delta must be in [0, 1), got " + stickyDelta);
        }
        if (!(smuxCapacityBps > 0)) {
            throw new IllegalArgumentException("SMux capacity must be positive, got " + smuxCapacityBps);
        }
        this.linkHeadroom = linkHeadroom;
        this.stickyDelta = stickyDelta;
        this.podShortcut = podShortcut;
        this.stopAtFirstUnfit = stopAtFirstUnfit;
        this.seed = seed;
        this.smuxCapacityBps = smuxCapacityBps;
    }

    public static SolverOptions defaults() {
        return new SolverOptions(DEFAULT_LINK_HEADROOM, DEFAULT_STICKY_DELTA, true, true, 1L,
                DEFAULT_SMUX_CAPACITY_BPS);
    }

    public SolverOptions withSeed(long s) {
        return new SolverOptions(linkHeadroom, stickyDelta, podShortcut, stopAtFirstUnfit, s, smuxCapacityBps);
    }

    public SolverOptions withStickyDelta(double d) {
        return new SolverOptions(linkHeadroom, d, podShortcut, stopAtFirstUnfit, seed, smuxCapacityBps);
    }

    public SolverOptions withPodShortcut(boolean on) {
        return new SolverOptions(linkHeadroom, stickyDelta, on, stopAtFirstUnfit, seed, smuxCapacityBps);
    }

    /** true: the paper's greedy (stop at the first VIP that fits nowhere); false: skip it and go on. */
    public SolverOptions withStopAtFirstUnfit(boolean stop) {
        return new SolverOptions(linkHeadroom, stickyDelta, podShortcut, stop, seed, smuxCapacityBps);
    }

    public SolverOptions withLinkHeadroom(double h) {
        return new SolverOptions(h, stickyDelta, podShortcut, stopAtFirstUnfit, seed, smuxCapacityBps);
    }

    public SolverOptions withSmuxCapacityBps(double c) {
        return new SolverOptions(linkHeadroom, stickyDelta, podShortcut, stopAtFirstUnfit, seed, c);
    }
}
