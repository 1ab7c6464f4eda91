package org.hybridlb.app.onos.fabric;

/** The SMux's Prometheus text ({@code GET <controlUrl>/metrics}, smux/README.md "Metrics"). */
public interface SmuxMetrics {
    /** The metrics of {@code smuxId}; throws when the SMux does not answer. */
    String metrics(String smuxId);
}
