package org.hybridlb.solver.workload;

import java.util.SplittableRandom;

/** Seeded random draws the generator needs (SplittableRandom has no Gaussian in Java 11). */
final class Rng {
    private final SplittableRandom random;
    private double spareGaussian = Double.NaN;

    Rng(long seed) {
        this.random = new SplittableRandom(seed);
    }

    double uniform() {
        return random.nextDouble();
    }

    int nextInt(int bound) {
        return random.nextInt(bound);
    }

    /** Inclusive lower, exclusive upper. */
    int nextInt(int from, int to) {
        return random.nextInt(from, to);
    }

    boolean chance(double p) {
        return random.nextDouble() < p;
    }

    /** Standard normal, Marsaglia polar method. */
    double gaussian() {
        if (!Double.isNaN(spareGaussian)) {
            double g = spareGaussian;
            spareGaussian = Double.NaN;
            return g;
        }
        double u;
        double v;
        double s;
        do {
            u = 2 * random.nextDouble() - 1;
            v = 2 * random.nextDouble() - 1;
            s = u * u + v * v;
        } while (s >= 1 || s == 0);
        double f = Math.sqrt(-2 * Math.log(s) / s);
        spareGaussian = v * f;
        return u * f;
    }

    /** Exponential with mean 1. */
    double exponential() {
        return -Math.log(1 - random.nextDouble());
    }
}
