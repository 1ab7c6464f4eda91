package org.hybridlb.app.core.port;

import java.util.Set;

/** The SMuxes whose aggregate announcements the fabric's route server holds (the live set). */
public interface RouteSource {
    Set<String> liveSmuxes();

    /** Reports changes of the live set to {@code sink} ({@link EventSink#smuxesChanged}). */
    default void subscribe(EventSink sink) {
    }
}
