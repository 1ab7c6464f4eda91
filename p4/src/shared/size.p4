// Table and register capacities of the hybridlb pipelines (Duet's host, ECMP and
// tunnel tables).  One place; the P4Info and the model read them from the source.
#ifndef HLB_SIZE_P4
#define HLB_SIZE_P4

#define ROUTING_V4_SIZE 4096          // LPM: /32 VIP routes, aggregates, host and fabric routes
#define NEXT_SIZE 1024                // next ids (ECMP groups)
#define ECMP_SELECTOR_SIZE 4096       // ECMP members
#define GATEWAY_ARP_SIZE 64           // addresses the switch answers ARP for
#define HMUX_SERVICE_SIZE 4096        // (VIP, protocol, port) services
#define HMUX_SELECTOR_SIZE 16384      // DIP weight units over all services (WCMP members)
#define HMUX_BUCKETS 16384            // per-DIP counters
#define CHEETAH_SERVERS_SIZE 16384    // AllServers: server id -> DIP
#define CHEETAH_POOL_SERVERS_SIZE 16384 // (pool, server id) pairs a VIP accepts
#define CHEETAH_OWNERS_SIZE 256       // (pool, owner) -> owning stateful mux
// Stateful Cheetah: partitions x 2^10 ConnTable entries (COOKIE-SPEC.md section 7:
// a 10-bit index per partition).  A power of two: the partition is a mask of H.
#define CHEETAH_PARTITIONS 4
#define CHEETAH_INDEX_BITS 10
#define CHEETAH_CONN_ENTRIES 4096     // CHEETAH_PARTITIONS << CHEETAH_INDEX_BITS

#endif
