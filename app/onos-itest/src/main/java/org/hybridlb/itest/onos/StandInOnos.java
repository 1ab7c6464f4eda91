package org.hybridlb.itest.onos;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.onlab.packet.IpAddress;
import org.onosproject.cluster.ClusterService;
import org.onosproject.cluster.ControllerNode;
import org.onosproject.cluster.DefaultControllerNode;
import org.onosproject.cluster.Leader;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.net.config.NetworkConfigRegistry;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.group.GroupService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.topology.TopologyService;
import org.onosproject.routeservice.RouteService;
import org.onosproject.security.AuditService;
import org.onosproject.store.service.ConsistentMapBuilder;
import org.onosproject.store.service.StorageService;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;

/**
 * Stands in for the ONOS core services that Maven Central does not serve (core-net, core-dist,
 * the route-service app): each is registered in the OSGi registry under its ONOS interface with the
 * small in-memory behaviour of a single-instance ONOS over {@link StandInNetwork}. Stopping this
 * bundle takes them all away, as a core restart would.
 */
public final class StandInOnos implements BundleActivator {
    public static final NodeId LOCAL = NodeId.nodeId("127.0.0.1");

    @Override
    public void start(BundleContext context) {
        StandInNetwork network = new StandInNetwork();
        StandInNetwork.NetworkConfig netcfg = new StandInNetwork.NetworkConfig();
        context.registerService(CoreService.class, Behaviour.of(CoreService.class, new Core()), null);
        context.registerService(ClusterService.class, Behaviour.of(ClusterService.class, new Cluster()), null);
        context.registerService(LeadershipService.class, Behaviour.of(LeadershipService.class, new Leaders()), null);
        context.registerService(StorageService.class, Behaviour.of(StorageService.class, new Storage()), null);
        context.registerService(new String[] {NetworkConfigRegistry.class.getName(),
            NetworkConfigService.class.getName()}, Behaviour.of(NetworkConfigRegistry.class, netcfg), null);
        context.registerService(DeviceService.class, Behaviour.of(DeviceService.class, network.new Devices()), null);
        // An empty network otherwise: no link, host, path, flow rule, group, driver or route; and
        // command auditing off (ONOS's AbstractShellCommand asks the AuditService).
        for (Class<?> empty : List.of(LinkService.class, HostService.class, TopologyService.class,
                FlowRuleService.class, GroupService.class, DriverService.class, RouteService.class,
                AuditService.class)) {
            context.registerService(empty.getName(), Behaviour.of(empty, new Object()), null);
        }
    }

    @Override
    public void stop(BundleContext context) {
        // the framework unregisters the services
    }

    /** CoreService: application ids. */
    public static final class Core {
        private final AtomicInteger nextId = new AtomicInteger(1);
        private final Map<String, ApplicationId> apps = new ConcurrentHashMap<>();

        public ApplicationId registerApplication(String name) {
            return apps.computeIfAbsent(name, n -> new DefaultApplicationId(nextId.getAndIncrement(), n));
        }

        public ApplicationId getAppId(String name) {
            return apps.get(name);
        }
    }

    /** ClusterService: a single instance. */
    public static final class Cluster {
        public ControllerNode getLocalNode() {
            return new DefaultControllerNode(LOCAL, IpAddress.valueOf("127.0.0.1"));
        }
    }

    /** LeadershipService: the only instance wins every election. */
    public static final class Leaders {
        public Leadership runForLeadership(String topic) {
            return new Leadership(topic, new Leader(LOCAL, 1, System.currentTimeMillis()), List.of(LOCAL));
        }

        public NodeId getLeader(String topic) {
            return LOCAL;
        }
    }

    /** StorageService: in-memory consistent maps. */
    public static final class Storage {
        public <K, V> ConsistentMapBuilder<K, V> consistentMapBuilder() {
            return InMemoryConsistentMap.builder();
        }
    }
}
