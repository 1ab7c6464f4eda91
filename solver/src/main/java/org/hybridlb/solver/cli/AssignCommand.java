package org.hybridlb.solver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder while the assign subcommand is being written; replaced before this lands. */
@Command(name = "assign", description = "(being written)")
public final class AssignCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("assign: not implemented yet");
    }
}
