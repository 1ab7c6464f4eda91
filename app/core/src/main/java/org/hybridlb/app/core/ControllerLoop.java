package org.hybridlb.app.core;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The controller's one thread and its queue. REST calls, source events, the interval timer and
 * migration waves are tasks here, so the parts of the controller share their state without a lock.
 * Reconcile requests coalesce into one queued round; configuration changes settle first (a burst
 * of REST calls is planned once).
 */
final class ControllerLoop implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ControllerLoop.class.getName());
    /** A settling change is reconciled at the latest this many settle windows after the first one. */
    static final int MAX_SETTLE_WINDOWS = 10;

    private final Duration requestTimeout;
    private final Duration settle;
    private final Consumer<Reason> reconcile;
    private final Consumer<RuntimeException> taskFailed;
    private final LinkedBlockingDeque<Runnable> queue = new LinkedBlockingDeque<>();
    private final Thread thread;
    private volatile boolean running;
    private ScheduledExecutorService timer;
    /** The queued round's reason (null: none queued); later requests merge into it until it starts. */
    private final AtomicReference<Reason> queued = new AtomicReference<>();
    private final AtomicBoolean settling = new AtomicBoolean();
    private volatile long firstChangeNanos;
    private volatile long lastChangeNanos;

    /** {@code reconcile} runs on the loop; {@code taskFailed} gets what a task threw (logged already). */
    ControllerLoop(Duration requestTimeout, Duration settle, Consumer<Reason> reconcile,
                   Consumer<RuntimeException> taskFailed) {
        this.requestTimeout = requestTimeout;
        this.settle = settle;
        this.reconcile = reconcile;
        this.taskFailed = taskFailed;
        this.thread = new Thread(this::run, "hybridlb-controller");
        this.thread.setDaemon(true);
    }

    void start() {
        running = true;
        thread.start();
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hybridlb-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /** Every {@code interval} (zero: never) a periodic round, skipped while {@code busy} (a migration runs). */
    void scheduleInterval(Duration interval, BooleanSupplier busy) {
        if (interval.isZero()) {
            return;
        }
        long ms = interval.toMillis();
        timer.scheduleAtFixedRate(() -> enqueue(() -> {
            if (!busy.getAsBoolean()) { // let a running migration finish; events still supersede it
                requestReconcile(Reason.of(Cause.INTERVAL));
            }
        }), ms, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        running = false;
        queue.add(() -> { });
        try {
            thread.join(requestTimeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        while (running) {
            Runnable task;
            try {
                task = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "controller task failed", e);
                taskFailed.accept(e);
            }
        }
        // stopped at a task boundary: the state on disk is the last verified one
        for (Runnable r; (r = queue.poll()) != null; ) {
            if (r instanceof FutureTask) {
                ((FutureTask<?>) r).cancel(false);
            }
        }
    }

    /** Runs {@code body} on the loop and waits for it (REST calls, tests); 503 when it does not answer in time. */
    <T> T call(Callable<T> body) {
        return call(body, requestTimeout.toMillis());
    }

    /** {@link #call(Callable)}, waiting at most {@code timeoutMillis}. */
    <T> T call(Callable<T> body, long timeoutMillis) {
        if (Thread.currentThread() == thread) {
            try {
                return body.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        if (!running) {
            throw ApiException.unavailable("the controller is not running");
        }
        FutureTask<T> task = new FutureTask<>(body);
        queue.add(task);
        try {
            return task.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            task.cancel(false);
            throw ApiException.unavailable("the controller is busy (no answer within " + timeoutMillis + " ms)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(c);
        }
    }

    void enqueue(Runnable task) {
        queue.add(task);
    }

    /** Ahead of every queued task (failover: a failed HMux or a lost SMux). */
    void first(Runnable task) {
        queue.addFirst(task);
    }

    /** Queues one round; further requests merge into it until it starts. */
    void requestReconcile(Reason why) {
        if (queued.getAndUpdate(q -> q == null ? why : q.merge(why)) == null) {
            enqueue(() -> reconcile.accept(queued.getAndSet(null)));
        }
    }

    /**
     * After a configuration change: a round once no change came for {@code settle}, but never later
     * than {@link #MAX_SETTLE_WINDOWS} settle windows after the first one.
     */
    void reconcileSoon(Reason why) {
        long now = System.nanoTime();
        lastChangeNanos = now;
        if (settle.isZero() || timer == null) {
            requestReconcile(why);
        } else if (settling.compareAndSet(false, true)) {
            firstChangeNanos = now;
            timer.schedule(() -> settleThenReconcile(why), settle.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private void settleThenReconcile(Reason why) {
        long now = System.nanoTime();
        long quiet = now - lastChangeNanos;
        long window = settle.toNanos();
        if (quiet < window && now - firstChangeNanos < MAX_SETTLE_WINDOWS * window) {
            timer.schedule(() -> settleThenReconcile(why), window - quiet, TimeUnit.NANOSECONDS);
            return;
        }
        requestReconcile(why);
        settling.set(false);
    }

    /** Waits until nothing is settling or queued and {@code busy} is false on the loop (tests, shutdown). */
    void awaitIdle(long timeoutMillis, BooleanSupplier busy) {
        long end = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < end) {
            if (!settling.get() && call(() -> queue.isEmpty() && !busy.getAsBoolean())) {
                return;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new IllegalStateException("controller not idle after " + timeoutMillis + " ms");
    }
}
