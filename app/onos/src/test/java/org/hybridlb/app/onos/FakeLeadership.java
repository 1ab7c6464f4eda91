package org.hybridlb.app.onos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.onlab.packet.IpAddress;
import org.onosproject.cluster.ClusterServiceAdapter;
import org.onosproject.cluster.ControllerNode;
import org.onosproject.cluster.DefaultControllerNode;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipServiceAdapter;
import org.onosproject.cluster.NodeId;

/**
 * A cluster's leadership elections on ONOS's adapters: the first candidate of a topic leads; when
 * the leader withdraws, the next candidate does. {@link #node} gives each ONOS instance its own
 * LeadershipService and ClusterService views; events reach every instance's listeners, as in ONOS.
 */
final class FakeLeadership {
    private final Map<String, Leadership> topics = new HashMap<>();
    final Listeners<LeadershipEvent, LeadershipEventListener> listeners = new Listeners<>();
    private long term;

    /** The services one instance (node {@code id}) sees. */
    final class Node extends LeadershipServiceAdapter {
        final NodeId id;
        final ClusterServiceAdapter cluster;

        Node(String id) {
            this.id = NodeId.nodeId(id);
            ControllerNode self = new DefaultControllerNode(this.id, IpAddress.valueOf("127.0.0.1"));
            this.cluster = new ClusterServiceAdapter() {
                @Override
                public ControllerNode getLocalNode() {
                    return self;
                }
            };
        }

        @Override
        public Leadership runForLeadership(String topic) {
            return join(topic, id);
        }

        @Override
        public void withdraw(String topic) {
            leave(topic, id);
        }

        @Override
        public Leadership getLeadership(String topic) {
            synchronized (FakeLeadership.this) {
                return topics.get(topic);
            }
        }

        @Override
        public NodeId getLeader(String topic) {
            Leadership l = getLeadership(topic);
            return l == null ? null : l.leaderNodeId();
        }

        @Override
        public void addListener(LeadershipEventListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(LeadershipEventListener l) {
            listeners.removeListener(l);
        }
    }

    Node node(String id) {
        return new Node(id);
    }

    int listenerCount() {
        return listeners.size();
    }

    private Leadership join(String topic, NodeId id) {
        Leadership l;
        synchronized (this) {
            Leadership old = topics.get(topic);
            List<NodeId> candidates = old == null ? new ArrayList<>() : new ArrayList<>(old.candidates());
            if (!candidates.contains(id)) {
                candidates.add(id);
            }
            Leader leader = old != null && old.leader() != null ? old.leader() : newLeader(id);
            l = new Leadership(topic, leader, candidates);
            topics.put(topic, l);
        }
        return l;
    }

    private void leave(String topic, NodeId id) {
        Leadership l;
        synchronized (this) {
            Leadership old = topics.get(topic);
            if (old == null) {
                return;
            }
            List<NodeId> candidates = new ArrayList<>(old.candidates());
            candidates.remove(id);
            Leader leader = old.leader();
            if (leader != null && leader.nodeId().equals(id)) {
                leader = candidates.isEmpty() ? null : newLeader(candidates.get(0));
            }
            l = new Leadership(topic, leader, candidates);
            topics.put(topic, l);
        }
        post(l);
    }

    /** Moves the leadership of {@code topic} to {@code id} (a candidate or not), as after a partition. */
    void elect(String topic, String id) {
        listeners.post(electSilently(topic, id));
    }

    /** {@link #elect} without telling anyone: returns the event ONOS would post. */
    LeadershipEvent electSilently(String topic, String id) {
        Leadership l;
        synchronized (this) {
            Leadership old = topics.get(topic);
            List<NodeId> candidates = old == null ? new ArrayList<>() : new ArrayList<>(old.candidates());
            if (!candidates.contains(NodeId.nodeId(id))) {
                candidates.add(0, NodeId.nodeId(id));
            }
            l = new Leadership(topic, newLeader(NodeId.nodeId(id)), candidates);
            topics.put(topic, l);
        }
        return new LeadershipEvent(LeadershipEvent.Type.LEADER_CHANGED, l);
    }

    private Leader newLeader(NodeId id) {
        return new Leader(id, ++term, System.currentTimeMillis());
    }

    private void post(Leadership l) {
        listeners.post(new LeadershipEvent(LeadershipEvent.Type.LEADER_CHANGED, l));
    }
}
