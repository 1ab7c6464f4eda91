package org.hybridlb.app.onos;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.onos.fabric.GroupConfirmation;
import org.onlab.graph.ScalarWeight;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.IpAddress;
import org.onosproject.TestApplicationId;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreServiceAdapter;
import org.onosproject.core.GroupId;
import org.onosproject.net.DefaultPath;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Host;
import org.onosproject.net.Link;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.Path;
import org.onosproject.net.behaviour.ExtensionTreatmentResolver;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceServiceAdapter;
import org.onosproject.net.driver.AbstractHandlerBehaviour;
import org.onosproject.net.driver.Behaviour;
import org.onosproject.net.driver.Driver;
import org.onosproject.net.driver.DriverData;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.driver.DriverServiceAdapter;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowId;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleOperation;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleServiceAdapter;
import org.onosproject.net.flow.instructions.ExtensionTreatment;
import org.onosproject.net.flow.instructions.ExtensionTreatmentType;
import org.onosproject.net.group.DefaultGroup;
import org.onosproject.net.group.DefaultGroupDescription;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBuckets;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupKey;
import org.onosproject.net.group.GroupEvent;
import org.onosproject.net.group.GroupListener;
import org.onosproject.net.group.GroupServiceAdapter;
import org.onosproject.net.host.HostServiceAdapter;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkServiceAdapter;
import org.onosproject.net.provider.ProviderId;
import org.onosproject.net.topology.Topology;
import org.onosproject.net.topology.TopologyServiceAdapter;
import org.onosproject.routeservice.ResolvedRoute;
import org.onosproject.routeservice.RouteEvent;
import org.onosproject.routeservice.RouteInfo;
import org.onosproject.routeservice.RouteListener;
import org.onosproject.routeservice.RouteService;
import org.onosproject.routeservice.RouteTableId;

/**
 * ONOS services for the tests: ONOS's own adapters with what the app uses overridden to behave
 * like a small fabric (nothing returns null by accident). Every device write is logged in order.
 */
final class FakeOnos {
    static final ApplicationId APP = TestApplicationId.create(HybridlbManager.APP_NAME);

    /** Device writes in order: "flow+ of:tor1 p3100 ...", "group+ of:tor1 hlb:vip:...", ... */
    final List<String> log = new CopyOnWriteArrayList<>();
    final Flows flows = new Flows();
    final Groups groups = new Groups();
    final Devices devices = new Devices();
    final Links links = new Links();
    final Hosts hosts = new Hosts();
    final Paths topology = new Paths();
    final Drivers drivers = new Drivers();
    final Routes routes = new Routes();
    final Smuxes smuxes = new Smuxes();
    final CoreServiceAdapter core = new CoreServiceAdapter() {
        @Override
        public ApplicationId registerApplication(String name) {
            return APP;
        }
    };

    // ---- fabric shape ---------------------------------------------------------------------------

    void device(String name) {
        devices.devices.put(NetTestTools.did(name), NetTestTools.device(name));
        devices.up.add(NetTestTools.did(name));
    }

    void link(String a, int pa, String b, int pb) {
        links.links.add(NetTestTools.link(a, pa, b, pb));
        links.links.add(NetTestTools.link(b, pb, a, pa));
    }

    void host(String mac, String ip, String device, int port) {
        hosts.hosts.add(new org.onosproject.net.DefaultHost(NetTestTools.PID,
                org.onosproject.net.HostId.hostId(org.onlab.packet.MacAddress.valueOf(mac)),
                org.onlab.packet.MacAddress.valueOf(mac), org.onlab.packet.VlanId.NONE,
                new org.onosproject.net.HostLocation(NetTestTools.did(device),
                        org.onosproject.net.PortNumber.portNumber(port), 0),
                Set.of(IpAddress.valueOf(ip))));
    }

    /**
     * A device fails as ONOS sees it: unavailable, its links removed, and the hosts located on it
     * forgotten by the host location provider (its default {@code hostRemovalEnabled}). Returns
     * what {@link #recover} puts back.
     */
    Runnable fail(String name) {
        DeviceId id = NetTestTools.did(name);
        setAvailable(name, false);
        List<Link> links = this.links.removeOf(id);
        List<Host> gone = hosts.removeAt(id);
        return () -> {
            setAvailable(name, true);
            links.forEach(this.links::add);
            gone.forEach(hosts::add);
        };
    }

    /**
     * Every fabric port of {@code name} goes down while its OpenFlow session stays up: ONOS removes
     * its links, the device stays available. Returns what puts the links back.
     */
    Runnable isolate(String name) {
        List<Link> gone = links.removeOf(NetTestTools.did(name));
        return () -> gone.forEach(links::add);
    }

    /** An operator deletes the device from ONOS: its links go, then DEVICE_REMOVED. */
    void removeDevice(String name) {
        DeviceId id = NetTestTools.did(name);
        Device d = devices.devices.remove(id);
        devices.up.remove(id);
        links.removeOf(id);
        devices.listeners.post(new DeviceEvent(DeviceEvent.Type.DEVICE_REMOVED, d));
    }

    /** Takes a device down (or up) and tells the listeners, as the device subsystem would. */
    void setAvailable(String name, boolean up) {
        DeviceId id = NetTestTools.did(name);
        if (up) {
            devices.up.add(id);
        } else {
            devices.up.remove(id);
        }
        devices.listeners.post(new DeviceEvent(DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED, devices.devices.get(id)));
    }

    /**
     * The operator gives {@code name} ONOS's {@code ovs} driver in netcfg (or takes it away): ONOS
     * binds the new driver and posts DEVICE_UPDATED.
     */
    void driverChanged(String name, boolean ovs) {
        DeviceId id = NetTestTools.did(name);
        if (ovs) {
            drivers.notOvs.remove(id);
        } else {
            drivers.notOvs.add(id);
        }
        devices.listeners.post(new DeviceEvent(DeviceEvent.Type.DEVICE_UPDATED, devices.devices.get(id)));
    }

    // ---- services -------------------------------------------------------------------------------

    final class Flows extends FlowRuleServiceAdapter {
        final Map<FlowId, FlowEntry> entries = new LinkedHashMap<>();
        /** When set, the next batch fails (the device refused it). */
        volatile boolean failNext;
        /** While set, batches are applied but their confirmation (the barrier reply) waits for {@link #release}. */
        volatile boolean holdConfirmations;
        private final List<FlowRuleOperations> held = new ArrayList<>();

        /** Confirms every batch held so far and stops holding. */
        void release() {
            List<FlowRuleOperations> done;
            synchronized (this) {
                holdConfirmations = false;
                done = new ArrayList<>(held);
                held.clear();
            }
            done.forEach(o -> o.callback().onSuccess(o));
        }

        synchronized int held() {
            return held.size();
        }

        @Override
        public synchronized void apply(FlowRuleOperations ops) {
            if (failNext) {
                failNext = false;
                ops.callback().onError(ops);
                return;
            }
            for (Set<FlowRuleOperation> stage : ops.stages()) {
                for (FlowRuleOperation op : stage) {
                    FlowRule r = op.rule();
                    switch (op.type()) {
                        case ADD:
                        case MODIFY:
                            entries.put(r.id(), new DefaultFlowEntry(r, FlowEntry.FlowEntryState.ADDED, 0, 0, 0));
                            log.add("flow+ " + describe(r));
                            break;
                        case REMOVE:
                            if (entries.remove(r.id()) != null) {
                                log.add("flow- " + describe(r));
                            }
                            break;
                        default:
                            break;
                    }
                }
            }
            if (holdConfirmations) {
                held.add(ops);
                return;
            }
            ops.callback().onSuccess(ops);
        }

        @Override
        public synchronized Iterable<FlowEntry> getFlowEntriesById(ApplicationId id) {
            return entries.values().stream().filter(e -> e.appId() == id.id()).collect(Collectors.toList());
        }

        @Override
        public synchronized Iterable<FlowEntry> getFlowEntries(DeviceId deviceId) {
            return entries.values().stream().filter(e -> e.deviceId().equals(deviceId)).collect(Collectors.toList());
        }

        @Override
        public synchronized void removeFlowRulesById(ApplicationId id) {
            entries.values().removeIf(e -> e.appId() == id.id());
            log.add("flow- all of " + id.name());
        }

        synchronized List<FlowEntry> on(String device) {
            return entries.values().stream().filter(e -> e.deviceId().equals(NetTestTools.did(device)))
                    .collect(Collectors.toList());
        }
    }

    /**
     * ONOS's group store and OpenFlow group provider. By default a write is confirmed at once
     * (ADDED). With {@link #confirmOnPoll} it stays PENDING_ADD / PENDING_UPDATE until the
     * provider's group-stats poll ({@link #poll}, or every {@link #startPolling} period) finds it
     * on the switch, as ONOS 2.7's OpenFlow group provider does; a key in {@link #refuse} is
     * refused by the switch: GROUP_ADD_FAILED / GROUP_UPDATE_FAILED, and the store drops it.
     * Events reach the listeners through ONOS's own {@link ListenerRegistry}.
     */
    final class Groups extends GroupServiceAdapter {
        final Map<DeviceId, Map<GroupKey, Group>> groups = new HashMap<>();
        final Listeners<GroupEvent, GroupListener> listeners = new Listeners<>();
        volatile boolean confirmOnPoll;
        final Set<String> refuse = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private java.util.concurrent.ScheduledExecutorService poller;
        private int nextId = 0x1000;

        @Override
        public synchronized void addGroup(GroupDescription d) {
            // ONOS's group manager takes the id the app gives (P4 action profile groups), else picks one
            DefaultGroup g = new DefaultGroup(GroupId.valueOf(d.givenGroupId() != null ? d.givenGroupId() : nextId++), d);
            log.add("group+ " + d.deviceId() + " " + text(d.appCookie()));
            if (refuse.contains(text(d.appCookie()))) {
                listeners.process(new GroupEvent(GroupEvent.Type.GROUP_ADD_FAILED, g));
                return;
            }
            g.setState(confirmOnPoll ? Group.GroupState.PENDING_ADD : Group.GroupState.ADDED);
            groups.computeIfAbsent(d.deviceId(), k -> new LinkedHashMap<>()).put(d.appCookie(), g);
        }

        @Override
        public synchronized Group getGroup(DeviceId deviceId, GroupKey appCookie) {
            return groups.getOrDefault(deviceId, Map.of()).get(appCookie);
        }

        @Override
        public synchronized void setBucketsForGroup(DeviceId deviceId, GroupKey oldCookie, GroupBuckets buckets,
                                                    GroupKey newCookie, ApplicationId appId) {
            Group old = getGroup(deviceId, oldCookie);
            DefaultGroup g = new DefaultGroup(old.id(), new DefaultGroupDescription(deviceId, old.type(), buckets,
                    newCookie, old.id().id(), appId));
            log.add("group* " + deviceId + " " + text(newCookie));
            if (refuse.contains(text(newCookie))) {
                groups.get(deviceId).remove(oldCookie);
                listeners.process(new GroupEvent(GroupEvent.Type.GROUP_UPDATE_FAILED, g));
                return;
            }
            g.setState(confirmOnPoll ? Group.GroupState.PENDING_UPDATE : Group.GroupState.ADDED);
            groups.get(deviceId).put(newCookie, g);
        }

        /** The provider's group-stats poll: every pending group is found on its switch. */
        synchronized void poll() {
            for (Map<GroupKey, Group> onDevice : groups.values()) {
                for (Group g : onDevice.values()) {
                    if (g.state() == Group.GroupState.PENDING_ADD || g.state() == Group.GroupState.PENDING_UPDATE) {
                        GroupEvent.Type t = g.state() == Group.GroupState.PENDING_ADD
                                ? GroupEvent.Type.GROUP_ADDED : GroupEvent.Type.GROUP_UPDATED;
                        ((DefaultGroup) g).setState(Group.GroupState.ADDED);
                        listeners.process(new GroupEvent(t, g));
                    }
                }
            }
        }

        /** Groups are confirmed only by a poll every {@code periodMillis}, as groupPollInterval does. */
        synchronized void startPolling(long periodMillis) {
            confirmOnPoll = true;
            poller = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            poller.scheduleAtFixedRate(this::poll, periodMillis, periodMillis,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        void stopPolling() {
            if (poller != null) {
                poller.shutdownNow();
            }
        }

        synchronized long pending() {
            return groups.values().stream().flatMap(m -> m.values().stream())
                    .filter(g -> g.state() != Group.GroupState.ADDED).count();
        }

        @Override
        public void addListener(GroupListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(GroupListener l) {
            listeners.removeListener(l);
        }

        @Override
        public synchronized void removeGroup(DeviceId deviceId, GroupKey appCookie, ApplicationId appId) {
            if (groups.getOrDefault(deviceId, new HashMap<>()).remove(appCookie) != null) {
                log.add("group- " + deviceId + " " + text(appCookie));
            }
        }

        @Override
        public synchronized Iterable<Group> getGroups(DeviceId deviceId, ApplicationId appId) {
            return groups.getOrDefault(deviceId, Map.of()).values().stream()
                    .filter(g -> g.appId().equals(appId)).collect(Collectors.toList());
        }

        @Override
        public synchronized Iterable<Group> getGroups(DeviceId deviceId) {
            return new ArrayList<>(groups.getOrDefault(deviceId, Map.of()).values());
        }

        synchronized int count() {
            return groups.values().stream().mapToInt(Map::size).sum();
        }
    }

    /** The app's group rule on these groups, registered as ONOS's would be ({@code pollSeconds}: the provider's). */
    GroupConfirmation confirmation(int pollSeconds) {
        GroupConfirmation c = new GroupConfirmation(APP, () -> pollSeconds, System::currentTimeMillis);
        groups.addListener(c);
        return c;
    }

    static final class Devices extends DeviceServiceAdapter {
        final Map<DeviceId, Device> devices = new LinkedHashMap<>();
        final Set<DeviceId> up = new HashSet<>();
        final Listeners<DeviceEvent, DeviceListener> listeners = new Listeners<>();

        @Override
        public Iterable<Device> getDevices() {
            return new ArrayList<>(devices.values());
        }

        @Override
        public Device getDevice(DeviceId id) {
            return devices.get(id);
        }

        /** Every port exists, at 10 Gb/s (ONOS reports speed in Mb/s). */
        @Override
        public org.onosproject.net.Port getPort(org.onosproject.net.ConnectPoint cp) {
            return new org.onosproject.net.DefaultPort(devices.get(cp.deviceId()), cp.port(), true,
                    org.onosproject.net.Port.Type.COPPER, 10_000);
        }

        @Override
        public boolean isAvailable(DeviceId id) {
            return up.contains(id);
        }

        @Override
        public void addListener(DeviceListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(DeviceListener l) {
            listeners.removeListener(l);
        }
    }

    static final class Links extends LinkServiceAdapter {
        final List<Link> links = new CopyOnWriteArrayList<>();
        final Listeners<org.onosproject.net.link.LinkEvent, LinkListener> listeners = new Listeners<>();

        /** Removes the links of {@code device} and tells the listeners, as ONOS does when it goes down. */
        List<Link> removeOf(DeviceId device) {
            List<Link> gone = new ArrayList<>();
            for (Link l : links) {
                if (l.src().deviceId().equals(device) || l.dst().deviceId().equals(device)) {
                    links.remove(l);
                    gone.add(l);
                    fire(new org.onosproject.net.link.LinkEvent(org.onosproject.net.link.LinkEvent.Type.LINK_REMOVED, l));
                }
            }
            return gone;
        }

        /** Adds {@code l} back and tells the listeners. */
        void add(Link l) {
            links.add(l);
            fire(new org.onosproject.net.link.LinkEvent(org.onosproject.net.link.LinkEvent.Type.LINK_ADDED, l));
        }

        private void fire(org.onosproject.net.link.LinkEvent e) {
            listeners.post(e);
        }

        @Override
        public Iterable<Link> getLinks() {
            return new ArrayList<>(links);
        }

        @Override
        public void addListener(LinkListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(LinkListener l) {
            listeners.removeListener(l);
        }
    }

    static final class Hosts extends HostServiceAdapter {
        final List<Host> hosts = new CopyOnWriteArrayList<>();
        final Listeners<org.onosproject.net.host.HostEvent, org.onosproject.net.host.HostListener> listeners =
                new Listeners<>();

        @Override
        public void addListener(org.onosproject.net.host.HostListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(org.onosproject.net.host.HostListener l) {
            listeners.removeListener(l);
        }

        /**
         * Forgets the hosts located on {@code device} and tells the listeners, as ONOS's host
         * location provider does when a device goes down; returns them.
         */
        List<Host> removeAt(DeviceId device) {
            List<Host> gone = new ArrayList<>();
            for (Host h : hosts) {
                if (h.location().deviceId().equals(device)) {
                    hosts.remove(h);
                    gone.add(h);
                    fire(new org.onosproject.net.host.HostEvent(org.onosproject.net.host.HostEvent.Type.HOST_REMOVED, h));
                }
            }
            return gone;
        }

        /** Learns {@code h} again and tells the listeners. */
        void add(Host h) {
            hosts.add(h);
            fire(new org.onosproject.net.host.HostEvent(org.onosproject.net.host.HostEvent.Type.HOST_ADDED, h));
        }

        private void fire(org.onosproject.net.host.HostEvent e) {
            listeners.post(e);
        }

        @Override
        public Iterable<Host> getHosts() {
            return new ArrayList<>(hosts);
        }

        @Override
        public Set<Host> getHostsByIp(IpAddress ip) {
            return hosts.stream().filter(h -> h.ipAddresses().contains(ip)).collect(Collectors.toSet());
        }
    }

    /** All shortest paths over the links (BFS), as ONOS's topology service answers them. */
    final class Paths extends TopologyServiceAdapter {
        @Override
        public Topology currentTopology() {
            return null;
        }

        @Override
        public Set<Path> getPaths(Topology t, DeviceId src, DeviceId dst) {
            Set<Path> out = new HashSet<>();
            Deque<List<Link>> queue = new ArrayDeque<>();
            queue.add(List.of());
            int best = Integer.MAX_VALUE;
            while (!queue.isEmpty()) {
                List<Link> p = queue.poll();
                if (p.size() >= best) {
                    continue;
                }
                DeviceId at = p.isEmpty() ? src : p.get(p.size() - 1).dst().deviceId();
                for (Link l : links.links) {
                    if (!l.src().deviceId().equals(at) || !devices.isAvailable(l.dst().deviceId())) {
                        continue;
                    }
                    if (p.stream().anyMatch(x -> x.src().deviceId().equals(l.dst().deviceId()))
                            || l.dst().deviceId().equals(src)) {
                        continue;
                    }
                    List<Link> q = new ArrayList<>(p);
                    q.add(l);
                    if (l.dst().deviceId().equals(dst)) {
                        best = q.size();
                        out.add(new DefaultPath(ProviderId.NONE, q, ScalarWeight.toWeight(q.size())));
                    } else {
                        queue.add(q);
                    }
                }
            }
            return out;
        }
    }

    /** Open vSwitch's Nicira set-tunnel-destination, as ONOS's nicira driver provides it. */
    static final class TunnelDst implements ExtensionTreatment {
        Ip4Address dst;

        @Override
        public ExtensionTreatmentType type() {
            return ExtensionTreatmentType.ExtensionTreatmentTypes.NICIRA_SET_TUNNEL_DST.type();
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> void setPropertyValue(String key, T value) {
            if (!"tunnelDst".equals(key)) {
                throw new IllegalArgumentException(key);
            }
            dst = (Ip4Address) value;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T getPropertyValue(String key) {
            return (T) dst;
        }

        @Override
        public List<String> getProperties() {
            return List.of("tunnelDst");
        }

        @Override
        public byte[] serialize() {
            return dst.toOctets();
        }

        @Override
        public void deserialize(byte[] data) {
            dst = Ip4Address.valueOf(data);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof TunnelDst && Objects.equals(((TunnelDst) o).dst, dst);
        }

        @Override
        public int hashCode() {
            return Objects.hashCode(dst);
        }

        @Override
        public String toString() {
            return "tunnelDst=" + dst;
        }
    }

    static final class Resolver extends AbstractHandlerBehaviour implements ExtensionTreatmentResolver {
        @Override
        public ExtensionTreatment getExtensionInstruction(ExtensionTreatmentType type) {
            if (!type.equals(ExtensionTreatmentType.ExtensionTreatmentTypes.NICIRA_SET_TUNNEL_DST.type())) {
                throw new UnsupportedOperationException(type.toString());
            }
            return new TunnelDst();
        }
    }

    /**
     * Drivers: every device has ONOS's {@code ovs} driver (with the Nicira extensions) unless listed
     * in {@link #notOvs}: those have the {@code default} one, as ONOS 2.7 gives Open vSwitch 3.x.
     */
    static final class Drivers extends DriverServiceAdapter {
        final Set<DeviceId> notOvs = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public Driver getDriver(DeviceId deviceId) {
            String name = notOvs.contains(deviceId) ? "default" : "ovs";
            return (Driver) java.lang.reflect.Proxy.newProxyInstance(Driver.class.getClassLoader(),
                    new Class<?>[] {Driver.class}, (proxy, method, args) -> {
                        if ("name".equals(method.getName())) {
                            return name;
                        }
                        throw new UnsupportedOperationException(method.getName());
                    });
        }

        @Override
        public DriverHandler createHandler(DeviceId deviceId, String... credentials) {
            return new DriverHandler() {
                @Override
                public Driver driver() {
                    return getDriver(deviceId);
                }

                @Override
                public DriverData data() {
                    return null;
                }

                @Override
                @SuppressWarnings("unchecked")
                public <T extends Behaviour> T behaviour(Class<T> c) {
                    if (c != ExtensionTreatmentResolver.class || notOvs.contains(deviceId)) {
                        throw new IllegalArgumentException(deviceId + " does not support " + c.getSimpleName());
                    }
                    return (T) new Resolver();
                }

                @Override
                public <T> T get(Class<T> c) {
                    return null;
                }
            };
        }
    }

    /** The route service with the SMux aggregate announcements (FPM/BGP) in it. */
    static final class Routes implements RouteService {
        final Map<String, Set<String>> nextHops = new LinkedHashMap<>();
        final Listeners<RouteEvent, RouteListener> listeners = new Listeners<>();

        @Override
        public Collection<RouteInfo> getRoutes(RouteTableId id) {
            List<RouteInfo> out = new ArrayList<>();
            for (Map.Entry<String, Set<String>> e : nextHops.entrySet()) {
                org.onlab.packet.IpPrefix p = org.onlab.packet.IpPrefix.valueOf(e.getKey());
                Set<ResolvedRoute> rs = new HashSet<>();
                for (String nh : e.getValue()) {
                    rs.add(new ResolvedRoute(new org.onosproject.routeservice.Route(
                            org.onosproject.routeservice.Route.Source.FPM, p, IpAddress.valueOf(nh)), null));
                }
                out.add(new RouteInfo(p, rs.isEmpty() ? null : rs.iterator().next(), rs));
            }
            return out;
        }

        void announce(String prefix, String... via) {
            nextHops.put(prefix, new HashSet<>(Arrays.asList(via)));
            listeners.post(new RouteEvent(RouteEvent.Type.ROUTE_UPDATED, null));
        }

        @Override
        public Collection<ResolvedRoute> getResolvedRoutes(RouteTableId id) {
            return List.of();
        }

        @Override
        public Collection<RouteTableId> getRouteTables() {
            return List.of(new RouteTableId("ipv4"));
        }

        @Override
        public Optional<ResolvedRoute> longestPrefixLookup(IpAddress ip) {
            return Optional.empty();
        }

        @Override
        public Collection<ResolvedRoute> getAllResolvedRoutes(org.onlab.packet.IpPrefix prefix) {
            return List.of();
        }

        @Override
        public org.onosproject.routeservice.Route longestPrefixMatch(IpAddress ip) {
            return null;
        }

        @Override
        public void addListener(RouteListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(RouteListener l) {
            listeners.removeListener(l);
        }
    }

    /** SMuxes that keep the last table they were sent (the SMux control API). */
    final class Smuxes implements SmuxControl {
        final Map<String, SmuxTable> tables = new HashMap<>();
        /** VIP -> pinned connections the HMux hash would move (GET /connections/diverging); none by default. */
        final Map<String, Long> diverging = new HashMap<>();

        @Override
        public synchronized Map<String, Long> divergingConnections(String smuxId) {
            return new HashMap<>(diverging);
        }

        /** smux id -> "vip proto port" -> bytes forwarded (GET /stats); an SMux not in here does not answer. */
        final Map<String, Map<String, Long>> vipBytes = new HashMap<>();

        @Override
        public synchronized Map<String, Long> vipBytes(String smuxId) {
            Map<String, Long> c = vipBytes.get(smuxId);
            if (c == null) {
                throw new org.hybridlb.app.core.port.SouthboundException(smuxId + " unreachable");
            }
            Map<String, Long> out = new HashMap<>();
            c.forEach((service, bytes) -> out.merge(service.split(" ")[0], bytes, Long::sum));
            return out;
        }

        @Override
        public synchronized void putTable(String smuxId, SmuxTable table) {
            tables.put(smuxId, table);
            log.add("smux " + smuxId + " v" + table.version + " " + table.vips.size() + " vips");
        }

        @Override
        public synchronized SmuxTable getTable(String smuxId) {
            SmuxTable t = tables.get(smuxId);
            // A fresh SMux runs an empty table of version 0 (smux/src/control.c).
            return t != null ? t : Json.read("{\"version\": 0, \"vips\": []}", SmuxTable.class);
        }
    }

    static String describe(FlowRule r) {
        return r.deviceId() + " p" + r.priority() + " " + r.selector().criteria().stream()
                .map(Object::toString).sorted().collect(Collectors.joining(",")) + " -> " + r.treatment().allInstructions();
    }

    static String text(GroupKey k) {
        return new String(k.key(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
