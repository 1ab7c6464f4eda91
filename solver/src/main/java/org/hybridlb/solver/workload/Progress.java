package org.hybridlb.solver.workload;

/** Receives progress of a long generation; the CLI draws it as a bar on stderr. */
@FunctionalInterface
public interface Progress {
    Progress NONE = (phase, done, total) -> { };

    /** {@code done} of {@code total} units of {@code phase} ("vips", "intervals") finished. */
    void update(String phase, long done, long total);
}
