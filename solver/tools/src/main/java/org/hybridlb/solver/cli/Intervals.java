package org.hybridlb.solver.cli;

import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;

/** {@code --interval N} means the same in every command: the interval whose "index" is N. */
final class Intervals {
    private Intervals() {
    }

    /**
     * The interval of index {@code index}; without one, the first (or the last) of the trace.
     * An index the trace does not have is an error naming {@code source} and the indices it has.
     */
    static TrafficInterval pick(TrafficTrace trace, Integer index, boolean lastByDefault, String source) {
        if (trace.intervals.isEmpty()) {
            throw new InvalidInputException(source, "/intervals", "the trace has no interval");
        }
        if (index == null) {
            return trace.intervals.get(lastByDefault ? trace.intervals.size() - 1 : 0);
        }
        for (TrafficInterval i : trace.intervals) {
            if (i.index == index) {
                return i;
            }
        }
        throw new InvalidInputException(source, "/intervals",
                "no interval with index " + index + " (--interval); the trace has " + trace.intervals.size()
                        + " intervals, indices " + trace.intervals.get(0).index + ".."
                        + trace.intervals.get(trace.intervals.size() - 1).index);
    }
}
