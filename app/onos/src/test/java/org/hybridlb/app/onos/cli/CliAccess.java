package org.hybridlb.app.onos.cli;

import java.util.List;
import org.hybridlb.app.onos.HybridlbService;
import org.onosproject.cli.AbstractShellCommand;

/** Test access to the commands' package-private fields (ONOS injects them through OSGi). */
public final class CliAccess {
    private CliAccess() {
    }

    public static void inject(AbstractShellCommand c, HybridlbService s) {
        ((HybridlbCommand) c).service = s;
    }

    /**
     * Runs the command body. ({@code execute()} first records the command with ONOS's AuditService,
     * which needs a running ONOS.)
     */
    public static void run(AbstractShellCommand c) {
        ((HybridlbCommand) c).doExecute();
    }

    public static AbstractShellCommand vips(String vip) {
        VipsCommand c = new VipsCommand();
        c.vip = vip;
        return c;
    }

    public static AbstractShellCommand assignment() {
        return new AssignmentCommand();
    }

    public static AbstractShellCommand reassign() {
        return new ReassignCommand();
    }

    public static AbstractShellCommand migrations() {
        return new MigrationsCommand();
    }

    public static AbstractShellCommand smuxes() {
        return new SmuxesCommand();
    }

    public static AbstractShellCommand switches() {
        return new SwitchesCommand();
    }

    public static AbstractShellCommand stats() {
        return new StatsCommand();
    }

    public static AbstractShellCommand prism(String vip, boolean connections) {
        PrismCommand c = new PrismCommand();
        c.vip = vip;
        c.connections = connections;
        return c;
    }

    public static List<String> vipChoices(HybridlbService s) {
        VipCompleter c = new VipCompleter();
        c.service = s;
        return c.choices();
    }

    public static List<String> smuxChoices(HybridlbService s) {
        SmuxCompleter c = new SmuxCompleter();
        c.service = s;
        return c.choices();
    }
}
