/**
 * The HMux intent in the P4 programs' terms, protocol-neutral (no gRPC, no ONOS): what every P4
 * southbound (hybridlbd's P4Runtime client, the ONOS pipeconf) renders and reads by.
 *
 * <p>{@link org.hybridlb.app.core.p4.HlbP4Info} holds every P4Info name and id (generated).
 * Entities ({@link org.hybridlb.app.core.p4.P4TableEntry}, {@link org.hybridlb.app.core.p4.P4Member},
 * {@link org.hybridlb.app.core.p4.P4Group}) carry P4Info names and ids and canonical
 * {@link org.hybridlb.app.core.p4.P4Value}s. {@link org.hybridlb.app.core.p4.HmuxP4Layout} says which
 * entities an HMux service, a VIP route and an aggregate are; {@link org.hybridlb.app.core.p4.HmuxP4Plan}
 * turns a switch's intent into the entities it takes (reusing the ids of what it holds), each bucket
 * counted in a {@code bucket_counter} index of its own on the switch ({@link org.hybridlb.app.core.p4.BucketCounters});
 * {@link org.hybridlb.app.core.p4.HmuxP4Reader} reads the entities a switch holds back into a
 * {@link org.hybridlb.app.core.hmux.SwitchReading}; {@link org.hybridlb.app.core.p4.P4Diff} gives the
 * ordered batches of updates from one set of entities to another (make before break).
 */
package org.hybridlb.app.core.p4;
