package org.hybridlb.standalone;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code hybridlbd --config FILE}: runs the daemon until SIGTERM/SIGINT. Exit 2: bad config. */
@Command(name = "hybridlbd", mixinStandardHelpOptions = true,
        description = "hybridlb controller daemon: REST API, OVS HMuxes, SMuxes, FRR route server, host agents.")
public final class Main implements Callable<Integer> {
    @Option(names = "--config", required = true, description = "daemon config file (JSON, see app/standalone/README.md)")
    Path config;

    @Option(names = "--listen", description = "override the config's listen address (host:port)")
    String listen;

    @Option(names = "--check", description = "validate the config and fabric files, then exit")
    boolean check;

    public static void main(String[] args) {
        Logs.setUp();
        System.exit(new CommandLine(new Main()).execute(args));
    }

    @Override
    public Integer call() throws InterruptedException {
        Daemon daemon;
        try {
            DaemonConfig cfg = DaemonConfig.load(config);
            if (listen != null) {
                cfg = DaemonConfig.withListen(cfg, listen);
            }
            if (check) {
                Fabric f = Fabric.load(cfg.fabric);
                System.out.println(config + ": ok (fabric " + f.name + ": " + f.switches.size() + " switches, "
                        + f.hosts.size() + " hosts, " + f.smuxes.size() + " SMuxes)");
                return 0;
            }
            daemon = new Daemon(cfg, new Daemon.Overrides()).start();
        } catch (ConfigException e) {
            e.problems().forEach(System.err::println);
            return 2;
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                daemon.close();
                // java.util.logging has shut down by now: say it directly
                System.err.println(java.time.Instant.now() + " INFO hybridlbd stopped (state in " + daemon.config.stateDir + ")");
            } catch (RuntimeException e) {
                System.err.println(java.time.Instant.now() + " WARNING stopping: " + e);
            }
            stop.countDown();
        }, "hybridlbd-shutdown"));
        stop.await();
        return 0;
    }
}
