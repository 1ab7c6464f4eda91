package org.hybridlb.app.onos;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the app's ONOS listeners put their work: ONOS delivers events on its own event threads
 * and ejects, for good, any listener that takes longer than about 2 s (ListenerRegistry's
 * execution time limit), after which the app would never hear of another link or port change.
 * So every listener only hands its event over here and returns: events are handled in arrival
 * order on the app's {@value #EVENTS} thread, and path refreshes (which write groups) run,
 * coalesced, on {@value #PATHS}, so a refresh waiting for a device never holds up the next event.
 */
final class EventHandoff {
    static final String EVENTS = "hybridlb-events";
    static final String PATHS = "hybridlb-paths";
    private static final Logger log = LoggerFactory.getLogger(EventHandoff.class);

    private final ExecutorService events = Executors.newSingleThreadExecutor(r -> thread(r, EVENTS));
    private final ExecutorService paths = Executors.newSingleThreadExecutor(r -> thread(r, PATHS));
    private final AtomicBoolean refreshQueued = new AtomicBoolean();

    private static Thread thread(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Runs {@code task} on the event thread, after every event handed over before it. */
    void execute(String what, Runnable task) {
        submit(events, what, task);
    }

    /**
     * Runs {@code refresh} on the path thread; requests made before it starts are served by that
     * one run (a burst of link events refreshes the paths once, after the last one was seen).
     */
    void refreshPaths(Runnable refresh) {
        if (refreshQueued.compareAndSet(false, true)) {
            submit(paths, "path refresh", () -> {
                refreshQueued.set(false);
                refresh.run();
            });
        }
    }

    private static void submit(ExecutorService on, String what, Runnable task) {
        try {
            on.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.warn("hybridlb: handling {} failed", what, e);
                }
            });
        } catch (RejectedExecutionException e) {
            log.debug("hybridlb: stopped; {} dropped", what);
        }
    }

    /** Stops both threads (queued work is dropped, running work interrupted) and waits for them. */
    void shutdown() {
        events.shutdownNow();
        paths.shutdownNow();
        try {
            if (!events.awaitTermination(10, TimeUnit.SECONDS) || !paths.awaitTermination(10, TimeUnit.SECONDS)) {
                log.warn("hybridlb: event handling still running 10 s after deactivation");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until everything handed over so far (and the refreshes it asked for) has run (tests). */
    void awaitIdle(long timeoutMillis) {
        long end = System.currentTimeMillis() + timeoutMillis;
        try {
            for (ExecutorService e : new ExecutorService[] {events, paths, events, paths}) {
                if (!e.isShutdown()) {
                    e.submit(() -> { }).get(Math.max(1, end - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
            throw new IllegalStateException("hybridlb events not handled after " + timeoutMillis + " ms", e);
        }
    }
}
