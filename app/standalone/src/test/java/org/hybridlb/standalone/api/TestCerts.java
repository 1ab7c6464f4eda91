package org.hybridlb.standalone.api;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Certificates made by the documented script, deploy/hlb-certs (openssl), for the tests. */
public final class TestCerts {
    public final Path dir;

    private TestCerts(Path dir) {
        this.dir = dir;
    }

    /** A CA in {@code dir} and a controller identity "hybridlbd" for 127.0.0.1 and localhost. */
    public static TestCerts make(Path dir) {
        TestCerts c = new TestCerts(dir);
        c.run("ca");
        c.run("controller", "hybridlbd", "--ip", "127.0.0.1", "--dns", "localhost");
        return c;
    }

    public void run(String... args) {
        List<String> cmd = new ArrayList<>(List.of("bash", Path.of("deploy", "hlb-certs").toAbsolutePath().toString(),
                dir.toString()));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("hlb-certs " + String.join(" ", args) + " failed: " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run hlb-certs (openssl installed?): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public Path ca() {
        return dir.resolve("ca.pem");
    }

    public Path p12(String name) {
        return dir.resolve(name + ".p12");
    }

    public Path pass(String name) {
        return dir.resolve(name + ".p12.pass");
    }
}
