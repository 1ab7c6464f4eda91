/**
 * The app on P4 fabrics: the pipeconfs of the hybridlb P4 programs ({@link HlbPipeconfs}, registered by
 * {@link HlbPipeconfLoader}), their interpreter ({@link HlbInterpreter}), and the HMux renderer and reader
 * for devices bound to them ({@link P4HmuxSouthbound}).
 */
package org.hybridlb.app.onos.p4;
