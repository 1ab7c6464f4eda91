package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import org.hybridlb.solver.assign.NoAssignmentException;
import org.hybridlb.solver.io.InvalidInputException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code java -jar hybridlb-solver.jar <subcommand>}: the batch face of the solver.
 * Exit codes: 0 ok, 1 internal error, 2 invalid input or usage (nothing partial is printed).
 */
@Command(name = "hybridlb-solver",
        mixinStandardHelpOptions = true,
        versionProvider = SolverCli.Version.class,
        description = "Duet VIP assignment for hybrid hardware/software load balancing, in batch.",
        subcommands = {
            TopologyCommand.class,
            WorkloadCommand.class,
            AssignCommand.class,
            PlanCommand.class,
            SimulateCommand.class,
            BenchCommand.class,
            YodaAssignCommand.class,
            IlpBenchCommand.class,
            CommandLine.HelpCommand.class,
        })
public final class SolverCli {
    public static final int EXIT_OK = 0;
    public static final int EXIT_INTERNAL = 1;
    public static final int EXIT_INVALID_INPUT = 2;
    /** The input is valid but no assignment meets it (e.g. a migration budget none can keep). */
    public static final int EXIT_NO_ASSIGNMENT = 3;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The configured command tree; tests run it with captured output. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new SolverCli());
        cl.setExecutionExceptionHandler(SolverCli::handle);
        cl.setParameterExceptionHandler((ex, args) -> {
            PrintWriter err = ex.getCommandLine().getErr();
            err.println("error: " + ex.getMessage());
            err.println("(see '" + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help')");
            return EXIT_INVALID_INPUT;
        });
        return cl;
    }

    private static int handle(Exception ex, CommandLine cl, CommandLine.ParseResult parsed) {
        PrintWriter err = cl.getErr();
        if (ex instanceof InvalidInputException) {
            err.println("error: " + ex.getMessage());
            return EXIT_INVALID_INPUT;
        }
        if (ex instanceof NoAssignmentException) {
            err.println("error: " + ex.getMessage());
            return EXIT_NO_ASSIGNMENT;
        }
        if (ex instanceof IllegalArgumentException) {
            err.println("error: " + ex.getMessage());
            return EXIT_INVALID_INPUT;
        }
        err.println("internal error: " + ex);
        ex.printStackTrace(err);
        return EXIT_INTERNAL;
    }

    /** Version from the jar manifest (Maven fills it), "dev" when run from classes. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SolverCli.class.getPackage().getImplementationVersion();
            return new String[] {"hybridlb-solver " + (v == null ? "dev" : v)};
        }
    }
}
