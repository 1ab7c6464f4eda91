/**
 * The app on P4 fabrics: the pipeconfs of the hybridlb P4 programs ({@link HlbPipeconfs}, registered by
 * {@link HlbPipeconfLoader}), their interpreter ({@link HlbInterpreter}). The HMux renderer and reader for
 * devices bound to them are in the fabric package ({@code P4HmuxRenderer}, {@code P4HmuxReader}).
 */
package org.hybridlb.app.onos.p4;
