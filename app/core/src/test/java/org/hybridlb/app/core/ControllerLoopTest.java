package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The loop alone: coalescing by cause, settling, calls that wait and calls that time out. */
class ControllerLoopTest {
    final List<Reason> rounds = new CopyOnWriteArrayList<>();
    ControllerLoop loop;

    ControllerLoop start(Duration timeout, Duration settle) {
        loop = new ControllerLoop(timeout, settle, rounds::add, e -> { });
        loop.start();
        return loop;
    }

    @AfterEach
    void stop() {
        loop.close();
    }

    /** Holds the loop until the returned latch is released. */
    CountDownLatch block() throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.enqueue(() -> {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        return release;
    }

    @Test
    void requestsCoalesceIntoOneRoundThatRepairsIfAnyOfThemMust() throws InterruptedException {
        start(Duration.ofSeconds(5), Duration.ZERO);
        CountDownLatch release = block();
        loop.requestReconcile(Reason.of(Cause.INTERVAL));
        loop.requestReconcile(new Reason(Cause.SWITCH_UP, "switch tor-0-0 up"));
        loop.requestReconcile(new Reason(Cause.CONFIG_CHANGED, "VIP 10.100.0.1 added"));
        release.countDown();
        loop.awaitIdle(10_000, () -> false);
        assertEquals(1, rounds.size(), rounds.toString());
        assertEquals(Cause.SWITCH_UP, rounds.get(0).cause, "the periodic round took an event in: it reads back");
        assertEquals("switch tor-0-0 up", rounds.get(0).text);

        release = block();
        loop.requestReconcile(Reason.of(Cause.INTERVAL));
        loop.requestReconcile(Reason.of(Cause.INTERVAL));
        release.countDown();
        loop.awaitIdle(10_000, () -> false);
        assertEquals(2, rounds.size());
        assertEquals(Cause.INTERVAL, rounds.get(1).cause);
        assertEquals("interval", rounds.get(1).text);
    }

    @Test
    void aBurstOfChangesSettlesIntoOneRound() throws InterruptedException {
        start(Duration.ofSeconds(5), Duration.ofMillis(50));
        for (int i = 0; i < 5; i++) {
            loop.reconcileSoon(new Reason(Cause.CONFIG_CHANGED, "VIP " + i + " added"));
            Thread.sleep(5);
        }
        loop.awaitIdle(10_000, () -> false);
        assertEquals(1, rounds.size(), rounds.toString());
        assertEquals("VIP 0 added", rounds.get(0).text);
    }

    @Test
    void aCallWaitsForTheLoopAndABusyLoopAnswers503() throws InterruptedException {
        start(Duration.ofMillis(200), Duration.ZERO);
        assertEquals("on " + "hybridlb-controller", loop.call(() -> "on " + Thread.currentThread().getName()));
        CountDownLatch release = block();
        ApiException e = assertThrows(ApiException.class, () -> loop.call(() -> 1));
        assertEquals(503, e.status);
        release.countDown();
    }
}
