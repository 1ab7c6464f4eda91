package org.hybridlb.solver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder while the bench subcommand is being written; replaced before this lands. */
@Command(name = "bench", description = "(being written)")
public final class BenchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("bench: not implemented yet");
    }
}
