package org.hybridlb.standalone;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.SouthboundException;

/**
 * Runs an external command (ovs-ofctl, ovs-vsctl, vtysh) with a timeout, optional stdin, and
 * the environment given; a failure (non-zero exit, timeout, cannot start) is a
 * {@link SouthboundException} naming the command and its stderr. The caller logs it (once, for a
 * polled source; every time, for a change that failed); here it is logged at FINE only.
 */
public final class Proc {
    private static final Logger LOG = Logger.getLogger(Proc.class.getName());

    private final Map<String, String> env;
    private final long timeoutMillis;

    public Proc(Map<String, String> env, long timeoutMillis) {
        this.env = Map.copyOf(env);
        this.timeoutMillis = timeoutMillis;
    }

    /** The result of a command that ran to its end. */
    public static final class Result {
        public final int exit;
        public final String out;
        public final String err;

        Result(int exit, String out, String err) {
            this.exit = exit;
            this.out = out;
            this.err = err;
        }
    }

    /** Runs {@code cmd}; throws unless it exits 0. */
    public String run(List<String> cmd, String stdin) {
        Result r = runAllowingFailure(cmd, stdin);
        if (r.exit != 0) {
            String msg = String.join(" ", cmd) + " exited " + r.exit + ": " + r.err.strip();
            LOG.fine(msg);
            throw new SouthboundException(msg);
        }
        return r.out;
    }

    /** Runs {@code cmd} and returns its exit code and output; throws only when it cannot run or times out. */
    public Result runAllowingFailure(List<String> cmd, String stdin) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            String msg = "cannot run " + cmd.get(0) + ": " + e.getMessage();
            LOG.fine(msg);
            throw new SouthboundException(msg, e);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread to = pump(p.getInputStream(), out);
        Thread te = pump(p.getErrorStream(), err);
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // the command exited before reading its input; its exit code tells why
        }
        try {
            if (!p.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                String msg = String.join(" ", cmd) + " timed out after " + timeoutMillis + " ms";
                LOG.fine(msg);
                throw new SouthboundException(msg);
            }
            to.join(timeoutMillis);
            te.join(timeoutMillis);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted while running " + cmd.get(0));
        }
        return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream sink) {
        Thread t = new Thread(() -> {
            try (in) {
                in.transferTo(sink);
            } catch (IOException e) {
                // the process was killed (timeout) or its stream closed: what was read is kept
            }
        }, "proc-pump");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
