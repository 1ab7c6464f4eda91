package org.hybridlb.app.core.p4;

import static org.hybridlb.app.core.p4.HlbP4Info.*;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.ServiceMatch;

/**
 * Where a P4 HMux counts each bucket it holds: the {@code bucket_counter} index that the bucket's
 * {@code set_dip} members and its cookie server's {@code accept_server} carry (the programs'
 * {@code bucket} parameter). The index is the switch's, not the VIP's bucket id: every (service,
 * bucket) on a switch has its own, below {@code HMUX_BUCKETS}, so each counter adds up one DIP's
 * packets. (A member id cannot serve: a bucket is as many members as its weight, and a changed pool
 * gets new members.)
 *
 * <p>One plan's allocation, from what the switch holds (no memory of its own, so a restarted
 * controller carries on where the last left off): a service's bucket keeps the index of the run of
 * members with its tunnel endpoint that the service's group lists now (in order, for two buckets on
 * one host), a server of no bucket (a drained DIP's) keeps its {@code vip_servers} index, and
 * anything else takes the lowest index the switch does not hold. An index freed by a change is
 * reused by a later one (its old members count there until the change is applied), or by this one
 * when no other is left.
 */
final class BucketCounters {
    /** A run of a group's equal {@code set_dip} members: one bucket. */
    private static final class Run {
        final String endpoint;
        final int index;

        Run(String endpoint, int index) {
            this.endpoint = endpoint;
            this.index = index;
        }
    }

    private final Map<Long, List<Run>> runs = new HashMap<>();                  // service id -> its group's runs
    private final Map<Long, Map<Long, Integer>> servers = new HashMap<>();       // service id -> server id -> index
    private final BitSet busy = new BitSet();   // held by the switch or given by this plan
    private final BitSet given = new BitSet();
    private int count;

    /** The indexes the controller's entities on a switch ({@code ours}) count in. */
    BucketCounters(P4State ours) {
        Map<Long, P4Member> members = ours.members(HMUX_DIP_SELECTOR_ID);
        members.values().forEach(m -> hold(indexOf(m.action)));
        for (P4Group g : ours.groups(HMUX_DIP_SELECTOR_ID).values()) {
            List<Run> out = new ArrayList<>();
            P4Action last = null;
            for (long id : g.memberIds) {
                P4Member m = members.get(id);
                if (m != null && m.action.id == HMUX_SET_DIP_ID && !m.action.equals(last)) {
                    out.add(new Run(m.action.param(HMUX_SET_DIP_TUNNEL_DST_ID).asIpv4(), indexOf(m.action)));
                }
                last = m == null ? null : m.action;
            }
            runs.put(g.groupId, out);
        }
        for (P4TableEntry e : ours.entries(CHEETAH_VIP_SERVERS_ID)) {
            int i = indexOf(e.action);
            hold(i);
            servers.computeIfAbsent(e.match(CHEETAH_VIP_SERVERS_SERVICE_ID_ID).value.asLong(), k -> new HashMap<>())
                    .put(e.match(CHEETAH_VIP_SERVERS_SERVER_ID_ID).value.asLong(), i);
        }
    }

    /** The {@code bucket_counter} index an HMux action counts in ({@code set_dip}, {@code accept_server}), or -1. */
    static int indexOf(P4Action a) {
        P4Value v = a == null ? null : a.id == HMUX_SET_DIP_ID ? a.param(HMUX_SET_DIP_BUCKET_ID)
                : a.id == CHEETAH_ACCEPT_SERVER_ID ? a.param(CHEETAH_ACCEPT_SERVER_BUCKET_ID) : null;
        return v == null ? -1 : (int) Math.min(v.asLong(), Integer.MAX_VALUE);
    }

    private void hold(int index) {
        if (index >= 0 && index < HMUX_BUCKETS) {
            busy.set(index);
        }
    }

    /** The index of each of service {@code sid}'s {@code buckets}, by bucket id. */
    Map<Integer, Integer> buckets(ServiceMatch m, long sid, List<DipBucket> buckets) {
        List<Run> held = new ArrayList<>(runs.getOrDefault(sid, List.of()));
        Map<Integer, Integer> out = new HashMap<>();
        for (DipBucket b : buckets) {
            Integer index = null;
            for (int i = 0; i < held.size() && index == null; i++) {
                if (held.get(i).endpoint.equals(b.endpoint) && free(held.get(i).index)) {
                    index = held.remove(i).index;
                }
            }
            out.put(b.id, give(m, index));
        }
        return out;
    }

    /** The index of server {@code serverId} of service {@code sid} that counts in none of its buckets. */
    int server(ServiceMatch m, long sid, long serverId) {
        Integer held = servers.getOrDefault(sid, Map.of()).get(serverId);
        return give(m, held != null && free(held) ? held : null);
    }

    private boolean free(int index) {
        return index >= 0 && index < HMUX_BUCKETS && !given.get(index);
    }

    /** Gives {@code index} (one to keep, free) or, when null, the lowest the switch does not hold. */
    private int give(ServiceMatch m, Integer index) {
        if (count >= HMUX_BUCKETS) {
            throw new IllegalArgumentException(m + ": no bucket_counter index left, the switch's buckets and "
                    + "cookie servers of no bucket take all " + HMUX_BUCKETS + " (HMUX_BUCKETS)");
        }
        int i = index != null ? index : busy.nextClearBit(0) < HMUX_BUCKETS ? busy.nextClearBit(0) : given.nextClearBit(0);
        busy.set(i);
        given.set(i);
        count++;
        return i;
    }
}
