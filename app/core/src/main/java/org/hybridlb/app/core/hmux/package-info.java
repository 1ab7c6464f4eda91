/**
 * The HMux intent: what every fabric switch must hold for the VIPs, said once for every southbound.
 *
 * <p>{@link org.hybridlb.app.core.hmux.SwitchIntent} is one switch's share, immutable: HMux entries
 * (a VIP service matched, a select group over its DIP buckets), {@code VIP/32} routes towards the
 * VIP's HMux, aggregate routes to the live SMuxes, and the fast-failover fallback (routes turn to
 * the aggregates in the data path when their HMux is unreachable). {@link
 * org.hybridlb.app.core.hmux.HmuxLayout} is the one layout policy: rule kinds, the priority ladder
 * ("more specific wins"), the cookie and group keys a reader recognises rules by without memory of
 * its own, and which buckets an HMux holds. {@link org.hybridlb.app.core.hmux.IntentDiff} compares a
 * desired intent with a {@link org.hybridlb.app.core.hmux.SwitchReading} (what a switch was read to
 * hold, with the items it holds half-written or that nobody wrote, said explicitly) and gives the
 * {@link org.hybridlb.app.core.hmux.SwitchDelta} that makes the switch right.
 *
 * <p>Each southbound (Open vSwitch over OpenFlow and P4Runtime in hybridlbd, the latter through
 * {@code org.hybridlb.app.core.p4}; ONOS FlowRule/Group in the app) renders deltas into device operations, reads devices back into readings and sends the
 * operations in batches; none decides layout. It also describes each switch
 * ({@link org.hybridlb.app.core.hmux.SwitchCapability}): how an SMux must hash and encapsulate to
 * agree with it ({@link org.hybridlb.app.core.hmux.HashContract}), what of a bucket it keeps, whether
 * it fails over in the data path and whether it decodes Cheetah cookies.
 */
package org.hybridlb.app.core.hmux;
