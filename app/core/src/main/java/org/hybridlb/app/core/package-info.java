/**
 * The controller core, platform-neutral: {@link Controller} is the façade the
 * hosts (hybridlbd, the ONOS app) build; its parts, each a class of this package:
 * <ul>
 * <li>{@link ControllerLoop}: the one thread and its queue (every part runs on it; no lock);</li>
 * <li>{@link Reconciler}: a round for each {@link Cause}, and the failovers that cannot wait;</li>
 * <li>{@link SwitchSync}: the HMux intent of every switch (core package {@code hmux}), what each
 *     holds, the deltas between;</li>
 * <li>{@link DeviceRepair}, {@link SmuxTablePublisher}: devices back to the installed state;
 *     {@link HashContracts}: how the SMuxes hash each VIP to agree with its HMux;</li>
 * <li>{@link DipHealthView}, {@link PoolGrowthHolds}, {@link ContractMoves}: which DIPs are out, which VIPs
 *     stay on the SMuxes (a grown pool; a move between HMuxes whose hash contracts differ);</li>
 * <li>{@link AssignmentPlanner}, {@link MigrationRunner}, {@link WaveExecutor}: where VIPs go, and
 *     the waves that take them there (verified, rolled back on failure);</li>
 * <li>{@link StateKeeper}, {@link BucketIds}: the persisted state and the stable bucket ids;</li>
 * <li>{@link HostCookies}: the Cheetah server ids and keys the host agents are given;</li>
 * <li>{@link DesiredConfig}, {@link StatusViews}: the operator's changes and the views it reads;</li>
 * <li>{@link org.hybridlb.app.core.prism.PrismHandoff}: the Prism hand-off controller (rules pushed to
 *     the front ends of Prism VIPs, their state), on a thread of its own.</li>
 * </ul>
 * Sub-packages: {@code hmux} (the HMux intent and its layout), {@code model} (what the data path
 * holds), {@code port} (what a host provides), {@code view} (the northbound's answers), {@code rest},
 * {@code metrics}, {@code stats}, {@code smux}, {@code store}, {@code tls}, {@code health},
 * {@code cheetah}, {@code prism}, {@code p4} (constants generated from the P4Info).
 */
package org.hybridlb.app.core;
