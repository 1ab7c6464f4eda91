package org.hybridlb.app.core.metrics;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.hybridlb.solver.model.Assignment;

/**
 * The controller's Prometheus metrics (Prometheus Java client 1.x, its own registry): the one
 * metrics class both hosts register — hybridlbd serves it at {@code /metrics}, the ONOS app at
 * {@code /onos/hybridlb/metrics}, through the core's REST resources. Three kinds of values:
 * <ul>
 * <li>events, counted and timed where they happen (reconciles by cause, migrations by outcome,
 *     failovers, southbound calls, state-store write failures);</li>
 * <li>the controller's state, read on its thread at scrape time ({@link #attach}): VIPs per
 *     placement, HMux/SMux traffic, SMux table version, devices, and the counters the controller
 *     keeps since it started (waves, rollbacks, repairs);</li>
 * <li>nothing else: no JVM or process metrics (the host's own exporters give those).</li>
 * </ul>
 * The names are listed in docs/operating.md. Thread-safe.
 */
public final class ControllerMetrics {
    public static final String PREFIX = "hybridlb_";
    /** Label of {@code hybridlb_vips} and the traffic gauges: {@code hmux} or {@code smux}. */
    public static final String HMUX = "hmux";
    public static final String SMUX = "smux";
    /**
     * How long a scrape waits for the controller's thread (busy with a wave) before it reports the
     * last sample: well within Prometheus's scrape timeout.
     */
    public static final long SAMPLE_TIMEOUT_MILLIS = 500;

    /** Reconcile rounds: a few ms to tens of seconds (1,000 VIPs on a loaded machine). */
    private static final double[] ROUND_SECONDS = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
    /** Migrations: one wave takes ~0.1-1 s on OVS; a held VIP waits minutes. */
    private static final double[] MIGRATION_SECONDS = {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900};
    /** One southbound call: an ovs-ofctl bundle, an SMux table PUT, an ONOS flow batch. */
    private static final double[] CALL_SECONDS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
        2.5, 5, 10};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter reconciles;
    private final Histogram reconcileSeconds;
    private final Gauge lastReconcile;
    private final Counter migrations;
    private final Histogram migrationSeconds;
    private final Counter failovers;
    private final Counter southboundErrors;
    private final Histogram southboundSeconds;
    private final Counter stateWriteErrors;
    private volatile Function<Long, StateSample> source;
    private volatile StateSample sample;

    public ControllerMetrics() {
        reconciles = Counter.builder().name(PREFIX + "reconciles_total")
                .help("Reconcile rounds run, by the cause of the round (start, interval, switch_down, ...)")
                .labelNames("cause").register(registry);
        reconcileSeconds = Histogram.builder().name(PREFIX + "reconcile_duration_seconds").unit(Unit.SECONDS)
                .help("Time one reconcile round took (read the sources, repair, assign, plan)")
                .classicOnly().classicUpperBounds(ROUND_SECONDS).register(registry);
        lastReconcile = Gauge.builder().name(PREFIX + "last_reconcile_timestamp_seconds").unit(Unit.SECONDS)
                .help("When the last reconcile round ended (Unix time): alert when it stops moving")
                .register(registry);
        migrations = Counter.builder().name(PREFIX + "migrations_total")
                .help("Migrations ended, by outcome (done, rolled-back, failed, superseded, interrupted)")
                .labelNames("outcome").register(registry);
        migrationSeconds = Histogram.builder().name(PREFIX + "migration_duration_seconds").unit(Unit.SECONDS)
                .help("Time from a migration's start to its end, by outcome")
                .labelNames("outcome").classicOnly().classicUpperBounds(MIGRATION_SECONDS).register(registry);
        failovers = Counter.builder().name(PREFIX + "failovers_total")
                .help("Failovers handled ahead of queued work: a failed HMux switch (kind=switch), "
                        + "an SMux lost from the live set (kind=smux)")
                .labelNames("kind").register(registry);
        southboundErrors = Counter.builder().name(PREFIX + "southbound_errors_total")
                .help("Southbound calls that failed, by southbound (hmux, smux) and operation")
                .labelNames("southbound", "operation").register(registry);
        southboundSeconds = Histogram.builder().name(PREFIX + "southbound_duration_seconds").unit(Unit.SECONDS)
                .help("Time of each southbound call (failed ones included), by southbound and operation")
                .labelNames("southbound", "operation").classicOnly().classicUpperBounds(CALL_SECONDS)
                .register(registry);
        stateWriteErrors = Counter.builder().name(PREFIX + "state_write_errors_total")
                .help("Writes of the controller state that failed (full disk, read-only file system, ...)")
                .register(registry);

        gauge("controller_active", "1 while a controller loop runs in this process (ONOS: the leader)",
                s -> 1);
        gauge("migration_in_flight", "1 while a migration runs", s -> s.migrating ? 1 : 0);
        GaugeWithCallback.builder().name(PREFIX + "vips")
                .help("Installed VIPs by placement: on an HMux switch (mux=hmux, placement=switch id) "
                        + "or on the SMuxes only (mux=smux, placement=smux)")
                .labelNames("mux", "placement")
                .callback(cb -> {
                    StateSample s = sample;
                    if (s != null) {
                        s.vipsByPlacement.forEach((at, n) -> cb.call(n, Assignment.SMUX.equals(at) ? SMUX : HMUX, at));
                    }
                }).register(registry);
        gauge("vips_configured", "VIPs in the operator's configuration", s -> s.vipsConfigured);
        gauge("vips_held_on_smuxes", "VIPs kept on the SMuxes while pinned connections would change DIP on an HMux",
                s -> s.vipsHeldOnSmuxes);
        GaugeWithCallback.builder().name(PREFIX + "traffic_bytes_per_second")
                .help("Bytes/s of the last measured interval, by the mux that carried it (hmux, smux)")
                .labelNames("mux")
                .callback(cb -> {
                    StateSample s = sample;
                    if (s != null) {
                        cb.call(s.hmuxBytesPerSecond, HMUX);
                        cb.call(s.smuxBytesPerSecond, SMUX);
                    }
                }).register(registry);
        gauge("smux_table_version", "Version of the VIP table last published to the SMuxes", s -> s.smuxTableVersion);
        gauge("smuxes", "SMuxes in the topology", s -> s.smuxes);
        gauge("smuxes_live", "SMuxes announcing the aggregates (route source)", s -> s.smuxesLive);
        gauge("switches", "Fabric switches", s -> s.switches);
        gauge("switches_down", "Switches down or cut off from the served part of the fabric", s -> s.switchesDown);
        gauge("switches_drained", "Switches drained by the operator", s -> s.switchesDrained);
        gauge("dips_unhealthy", "DIPs out of their pools (failed health check or unreachable)", s -> s.dipsUnhealthy);
        gauge("state_writable", "0 while the last write of the controller state failed", s -> s.stateWritable ? 1 : 0);
        counter("waves_applied_total", "Migration waves applied and verified", s -> s.wavesApplied);
        counter("rollbacks_total", "Migrations rolled back (a wave failed or did not verify)", s -> s.rollbacks);
        counter("failover_vips_total", "VIPs whose routes were withdrawn from a failed HMux switch",
                s -> s.failoverVips);
        counter("repairs_total", "Device entries, SMux tables and aggregate groups put right by repair",
                s -> s.repairs);
        counter("dips_removed_in_place_total", "VIPs whose failed or removed DIPs' buckets were removed in place",
                s -> s.dipsRemovedInPlace);
    }

    private void gauge(String name, String help, ToDoubleFunction<StateSample> value) {
        GaugeWithCallback.builder().name(PREFIX + name).help(help).callback(cb -> {
            StateSample s = sample;
            if (s != null) {
                cb.call(value.applyAsDouble(s));
            }
        }).register(registry);
    }

    private void counter(String name, String help, ToDoubleFunction<StateSample> value) {
        CounterWithCallback.builder().name(PREFIX + name).help(help + " since the controller started").callback(cb -> {
            StateSample s = sample;
            if (s != null) {
                cb.call(value.applyAsDouble(s));
            }
        }).register(registry);
    }

    // ------------------------------------------------------------------ the controller's state

    /**
     * The running controller: {@code source} reads its state on its thread, waiting at most the
     * given milliseconds (null when it could not answer in time: the scrape reports the last sample).
     */
    public void attach(Function<Long, StateSample> source) {
        this.source = source;
    }

    /** The controller stopped (ONOS: leadership moved): its state is no longer reported. */
    public void detach() {
        source = null;
        sample = null;
    }

    /** Reads the controller's state now (the last sample if it is busy); false when none runs. */
    public boolean refresh() {
        Function<Long, StateSample> s = source;
        if (s == null) {
            return false;
        }
        StateSample now = s.apply(SAMPLE_TIMEOUT_MILLIS);
        if (now != null && source != null) {
            sample = now;
        }
        return true;
    }

    // ------------------------------------------------------------------ events

    /** A reconcile round for {@code cause} ended after {@code seconds}. */
    public void reconciled(String cause, double seconds) {
        reconciles.labelValues(cause).inc();
        reconcileSeconds.observe(seconds);
        lastReconcile.set(System.currentTimeMillis() / 1000.0);
    }

    /** A migration ended with {@code outcome} (MigrationRecord states) after {@code seconds}. */
    public void migrationEnded(String outcome, double seconds) {
        migrations.labelValues(outcome).inc();
        migrationSeconds.labelValues(outcome).observe(seconds);
    }

    /** A failed HMux switch handled ({@code switch}), or {@code n} SMuxes lost from the live set ({@code smux}). */
    public void failover(String kind, int n) {
        failovers.labelValues(kind).inc(n);
    }

    public void stateWriteFailed() {
        stateWriteErrors.inc();
    }

    /** Runs one southbound call, timed; a call that throws is counted as an error and rethrown. */
    public <T> T southbound(String southbound, String operation, Supplier<T> call) {
        long t0 = System.nanoTime();
        try {
            return call.get();
        } catch (RuntimeException e) {
            southboundErrors.labelValues(southbound, operation).inc();
            throw e;
        } finally {
            southboundSeconds.labelValues(southbound, operation).observe((System.nanoTime() - t0) / 1e9);
        }
    }

    /** {@link #southbound(String, String, Supplier)} for a call without a result. */
    public void southbound(String southbound, String operation, Runnable call) {
        southbound(southbound, operation, () -> {
            call.run();
            return null;
        });
    }

    // ------------------------------------------------------------------ exposition

    /** The registry (a host may add its own metrics to it). */
    public PrometheusRegistry registry() {
        return registry;
    }

    /** The content type of {@link #writeTo}: Prometheus text format 0.0.4. */
    public String contentType() {
        return writer.getContentType();
    }

    /** Refreshes the controller's state and writes every metric in Prometheus text format. */
    public void writeTo(OutputStream out) throws IOException {
        refresh();
        writer.write(out, registry.scrape());
    }

    /** {@link #writeTo} as a string (tests, the CLI). */
    public String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
