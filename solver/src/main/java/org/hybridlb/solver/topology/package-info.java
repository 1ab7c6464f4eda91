/**
 * Topology generators: k-ary fat-tree ({@link org.hybridlb.solver.topology.FatTree}), the Duet
 * production-like Clos of §3.8.1 ({@link org.hybridlb.solver.topology.DuetClos}) and the Duet
 * testbed of Fig. 3.10 ({@link org.hybridlb.solver.topology.DuetTestbed}). All share one naming
 * and addressing plan ({@link org.hybridlb.solver.topology.FabricBuilder}).
 */
package org.hybridlb.solver.topology;
