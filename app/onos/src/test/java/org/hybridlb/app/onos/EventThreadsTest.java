package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.onosproject.net.DefaultPort;
import org.onosproject.net.Device;
import org.onosproject.net.Link;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.PortNumber;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.host.HostEvent;
import org.onosproject.net.link.LinkEvent;
import org.onosproject.routeservice.RouteEvent;

/**
 * ONOS ejects, for good, a listener that takes longer than about 2 s (its ListenerRegistry and the
 * event dispatcher's watchdog); an ejected app never hears of another link or port change. Every
 * event here goes through ONOS's own ListenerRegistry, delivered as the dispatcher does
 * ({@link Listeners#deliver}), while every group the app writes stays pending: the OpenFlow group
 * provider's stats poll that would confirm them never comes. Each handler must return at once,
 * stay registered, and the app must still act on the event.
 */
public class EventThreadsTest {
    /** Far below the 1.8 s after which ONOS ejects a listener, far above a hand-over. */
    static final long FAST_MILLIS = 250;

    HybridlbManagerTest t;
    final Map<String, Long> took = new LinkedHashMap<>();

    @Before
    public void setUp() {
        t = HybridlbManagerTest.started();
    }

    @After
    public void tearDown() {
        t.tearDown();
    }

    private <E extends org.onosproject.event.Event<?, ?>> void deliver(String what,
            Listeners<E, ? extends org.onosproject.event.EventListener<E>> registry, E event) throws Exception {
        int before = registry.size();
        took.put(what, registry.deliver(event));
        assertEquals(what + ": the app's listener was ejected", before, registry.size());
    }

    private List<GroupBucket> towardBuckets(String device, String hmux) {
        return t.onos.groups.getGroup(NetTestTools.did(device), new DefaultGroupKey(("hlb:to:" + hmux).getBytes()))
                .buckets().buckets();
    }

    @Test
    public void everyHandlerReturnsAtOnceWhileGroupsArePendingAndAWaveWaitsForItsSwitch() throws Exception {
        String hmux = t.placedOnHmux();
        // tor1's first hops towards tor2 exist whichever ToR the VIP starts on (tor1 and tor2 tie):
        // tor2 holds the SMux, whose aggregate is routed there
        String other = "tor1";
        String toward = "tor2";
        assertEquals(2, towardBuckets(other, toward).size());
        t.onos.groups.confirmOnPoll = true;   // from now on no group is ever confirmed

        // a port of the other ToR goes down: its link to spine1 is gone, then the port event
        Device dev = t.onos.devices.devices.get(NetTestTools.did(other));
        List<Link> gone = new ArrayList<>();
        for (Link l : t.onos.links.links) {
            if (l.src().deviceId().equals(dev.id()) && l.dst().deviceId().equals(NetTestTools.did("spine1"))
                    || l.dst().deviceId().equals(dev.id()) && l.src().deviceId().equals(NetTestTools.did("spine1"))) {
                gone.add(l);
            }
        }
        t.onos.links.links.removeAll(gone);
        deliver("device PORT_UPDATED", t.onos.devices.listeners,
                new DeviceEvent(DeviceEvent.Type.PORT_UPDATED, dev, new DefaultPort(dev, PortNumber.portNumber(1), false)));
        deliver("link LINK_REMOVED", t.onos.links.listeners, new LinkEvent(LinkEvent.Type.LINK_REMOVED, gone.get(0)));
        t.settle();
        assertEquals("the app acted: one first hop left", 1, towardBuckets(other, toward).size());

        // a drain starts a migration whose first flow batch waits for the switch's barrier reply
        t.onos.flows.holdConfirmations = true;
        t.manager.api().setDrained(hmux, true);
        HybridlbManagerTest.waitFor(() -> t.onos.flows.held() > 0, 10_000);

        // meanwhile the port comes back, and more events arrive
        t.onos.links.links.addAll(gone);
        deliver("device PORT_UPDATED (up)", t.onos.devices.listeners,
                new DeviceEvent(DeviceEvent.Type.PORT_UPDATED, dev, new DefaultPort(dev, PortNumber.portNumber(1), true)));
        deliver("link LINK_ADDED", t.onos.links.listeners, new LinkEvent(LinkEvent.Type.LINK_ADDED, gone.get(0)));
        deliver("host HOST_UPDATED", t.onos.hosts.listeners,
                new HostEvent(HostEvent.Type.HOST_UPDATED, t.onos.hosts.hosts.get(0)));
        deliver("route ROUTE_UPDATED", t.onos.routes.listeners, new RouteEvent(RouteEvent.Type.ROUTE_UPDATED, null));
        ObjectNode json = HybridlbManagerTest.configJson(false);   // the operator adds a DIP through netcfg
        ((ArrayNode) json.get("vips")).add(HybridlbManagerTest.vip(HybridlbManagerTest.VIP, "10.0.1.2", "10.0.1.3",
                "10.0.2.2"));
        HybridlbConfig c = HybridlbManagerTest.config(json);
        t.netcfg.config = c;
        deliver("netcfg CONFIG_UPDATED", t.netcfg.listeners, new NetworkConfigEvent(
                NetworkConfigEvent.Type.CONFIG_UPDATED, FakeOnos.APP, c, null, HybridlbConfig.class));
        // leadership moves away and comes back (the app stops, then restarts its loop)
        deliver("leadership to onos-2", t.cluster.listeners,
                t.cluster.electSilently(HybridlbManager.LEADERSHIP_TOPIC, "onos-2"));
        deliver("leadership to onos-1", t.cluster.listeners,
                t.cluster.electSilently(HybridlbManager.LEADERSHIP_TOPIC, "onos-1"));
        t.onos.flows.release();

        for (Map.Entry<String, Long> e : took.entrySet()) {
            assertTrue("handlers must hand over and return: " + took, e.getValue() < FAST_MILLIS);
        }
        t.settle();
        t.manager.api().reassignNow();
        t.settle();
        assertEquals("onos-1", t.manager.leader().id());
        assertEquals("the app acted: both first hops again", 2, towardBuckets(other, toward).size());
        assertEquals(3, t.manager.api().vip(HybridlbManagerTest.VIP).ports.get(0).dips.size());
    }
}
