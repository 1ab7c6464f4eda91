package org.hybridlb.app.core.port;

import java.util.Set;

/** DIP health as the host agents report it. */
public interface HealthSource {
    /** DIP addresses that fail their health check now. */
    Set<String> unhealthyDips();

    /** Reports changes to {@code sink} ({@link EventSink#dipHealthChanged}). */
    default void subscribe(EventSink sink) {
    }
}
