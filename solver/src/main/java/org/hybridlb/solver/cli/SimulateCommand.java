package org.hybridlb.solver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder while the simulate subcommand is being written; replaced before this lands. */
@Command(name = "simulate", description = "(being written)")
public final class SimulateCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("simulate: not implemented yet");
    }
}
