/**
 * The traffic matrix, one rule for every host: hosts read their devices' counters into
 * {@link org.hybridlb.app.core.stats.CounterSample}s (HMux entry and route bytes from the switches,
 * VIP bytes from the SMuxes, per-DIP rates from the host agents) and the
 * {@link org.hybridlb.app.core.stats.TrafficMatrixBuilder} turns them into the intervals the
 * solver assigns on: windowing, counter resets and attribution to sources live here only.
 */
package org.hybridlb.app.core.stats;
