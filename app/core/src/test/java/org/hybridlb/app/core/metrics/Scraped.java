package org.hybridlb.app.core.metrics;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.DistributionDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/** One scrape of a {@link ControllerMetrics}, read through the client's snapshot model (tests). */
public final class Scraped {
    private final MetricSnapshots snapshots;

    private Scraped(MetricSnapshots snapshots) {
        this.snapshots = snapshots;
    }

    /** Refreshes the controller's state as a scrape does, then takes the snapshot. */
    public static Scraped of(ControllerMetrics m) {
        m.refresh();
        return new Scraped(m.registry().scrape());
    }

    /**
     * The value of {@code name} (a counter without {@code _total}, a gauge, or a histogram: its
     * count) whose labels include {@code labels} (name, value, name, value...); NaN when absent.
     */
    public double value(String name, String... labels) {
        for (MetricSnapshot s : snapshots) {
            if (!s.getMetadata().getPrometheusName().equals(name)) {
                continue;
            }
            for (DataPointSnapshot p : s.getDataPoints()) {
                if (matches(p, labels)) {
                    if (s instanceof CounterSnapshot) {
                        return ((CounterSnapshot.CounterDataPointSnapshot) p).getValue();
                    }
                    if (s instanceof GaugeSnapshot) {
                        return ((GaugeSnapshot.GaugeDataPointSnapshot) p).getValue();
                    }
                    return ((DistributionDataPointSnapshot) p).getCount();
                }
            }
        }
        return Double.NaN;
    }

    private static boolean matches(DataPointSnapshot p, String[] labels) {
        for (int i = 0; i + 1 < labels.length; i += 2) {
            if (!labels[i + 1].equals(p.getLabels().get(labels[i]))) {
                return false;
            }
        }
        return true;
    }
}
