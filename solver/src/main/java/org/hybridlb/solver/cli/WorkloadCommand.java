package org.hybridlb.solver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder while the workload subcommand is being written; replaced before this lands. */
@Command(name = "workload", description = "(being written)")
public final class WorkloadCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("workload: not implemented yet");
    }
}
