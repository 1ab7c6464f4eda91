/**
 * Seeded synthetic VIP workloads shaped like Duet Fig. 3.15: a VIP configuration and a traffic
 * trace over intervals with drift. See solver/WORKLOAD.md for the distributions and why.
 */
package org.hybridlb.solver.workload;
