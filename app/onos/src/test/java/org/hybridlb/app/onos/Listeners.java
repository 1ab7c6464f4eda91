package org.hybridlb.app.onos;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.onosproject.event.Event;
import org.onosproject.event.EventListener;
import org.onosproject.event.ListenerRegistry;

/**
 * ONOS's own {@link ListenerRegistry} (onos-api) as the test doubles' listener lists: listeners
 * see events through its {@code process} (their {@code isRelevant} first, their exceptions
 * caught), and {@link #deliver} runs it the way ONOS's event dispatcher (core-net's
 * CoreEventDispatcher, not on Maven Central) does: on a dispatcher thread, with a watchdog that
 * calls {@code onProcessLimit()} once a delivery runs past {@value #MAX_PROCESS_MILLIS} ms, which
 * ejects the listener that has been running longer than ListenerRegistry's own limit (1.8 s).
 */
final class Listeners<E extends Event<?, ?>, L extends EventListener<E>> extends ListenerRegistry<E, L> {
    /** CoreEventDispatcher's default maximum time a sink may take for one event. */
    static final long MAX_PROCESS_MILLIS = 2000;
    private static final ExecutorService DISPATCHER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "onos-event-dispatch");
        t.setDaemon(true);
        return t;
    });

    int size() {
        return listeners.size();
    }

    boolean isEmpty() {
        return listeners.isEmpty();
    }

    /** Synchronous delivery on the caller's thread (most tests). */
    void post(E event) {
        process(event);
    }

    /**
     * Delivers {@code event} as ONOS's dispatcher would, watchdog included, and returns how long
     * {@code process} took (ms); waits at most 20 s for it.
     */
    long deliver(E event) throws Exception {
        long t0 = System.nanoTime();
        Future<Long> f = DISPATCHER.submit(() -> {
            long start = System.nanoTime();
            process(event);
            return (System.nanoTime() - start) / 1_000_000;
        });
        boolean limitCalled = false;
        while (!f.isDone()) {
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (!limitCalled && ms > MAX_PROCESS_MILLIS) {
                onProcessLimit();
                limitCalled = true;
            }
            if (ms > 20_000) {
                break;
            }
            Thread.sleep(5);
        }
        return f.get(1, TimeUnit.MILLISECONDS);
    }
}
