package org.hybridlb.solver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder while the topology subcommand is being written; replaced before this lands. */
@Command(name = "topology", description = "(being written)")
public final class TopologyCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("topology: not implemented yet");
    }
}
