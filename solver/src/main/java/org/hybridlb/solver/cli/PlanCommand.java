package org.hybridlb.solver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder while the plan subcommand is being written; replaced before this lands. */
@Command(name = "plan", description = "(being written)")
public final class PlanCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("plan: not implemented yet");
    }
}
