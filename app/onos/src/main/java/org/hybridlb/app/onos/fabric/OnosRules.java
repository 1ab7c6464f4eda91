package org.hybridlb.app.onos.fabric;

import java.util.List;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.port.SouthboundException;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.IpAddress;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.TpPort;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.GroupId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.behaviour.ExtensionTreatmentResolver;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;
import org.onosproject.net.flow.instructions.ExtensionTreatment;
import org.onosproject.net.flow.instructions.ExtensionTreatmentType;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.GroupBucket;

/**
 * The core's HMux layout ({@link HmuxLayout}) spelt in ONOS flow rules and group buckets, both
 * ways: an entry, a route and an aggregate as flow rules at their priorities, an HMux bucket as
 * Nicira set-tunnel-destination then output to the switch's flow-based GRE port; and back from
 * what ONOS holds to the match, VIP, prefix, group and bucket they stand for.
 */
final class OnosRules {
    /** Property of ONOS's Nicira set-tunnel-destination extension (NiciraSetTunnelDst). */
    static final String TUNNEL_DST = "tunnelDst";

    private final ApplicationId appId;
    private final DriverService drivers;

    OnosRules(ApplicationId appId, DriverService drivers) {
        this.appId = appId;
        this.drivers = drivers;
    }

    FlowRule entry(DeviceId device, ServiceMatch m, GroupId group) {
        TrafficSelector.Builder sel = selector(IpPrefix.valueOf(IpAddress.valueOf(m.vip), 32));
        if (!m.wholeVip()) {
            sel.matchIPProtocol("tcp".equals(m.proto) ? IPv4.PROTOCOL_TCP : IPv4.PROTOCOL_UDP);
            if (m.port != 0) {
                if ("tcp".equals(m.proto)) {
                    sel.matchTcpDst(TpPort.tpPort(m.port));
                } else {
                    sel.matchUdpDst(TpPort.tpPort(m.port));
                }
            }
        }
        return rule(device, sel.build(), HmuxLayout.priority(m), group);
    }

    FlowRule route(DeviceId device, String vip, GroupId group) {
        return rule(device, selector(IpPrefix.valueOf(IpAddress.valueOf(vip), 32)).build(), HmuxLayout.PRIORITY_ROUTE,
                group);
    }

    FlowRule aggregate(DeviceId device, String prefix, GroupId group) {
        return rule(device, selector(IpPrefix.valueOf(prefix)).build(), HmuxLayout.PRIORITY_AGGREGATE, group);
    }

    private FlowRule rule(DeviceId device, TrafficSelector sel, int priority, GroupId group) {
        return DefaultFlowRule.builder().forDevice(device).withSelector(sel).withTreatment(toGroup(group))
                .withPriority(priority).fromApp(appId).makePermanent().build();
    }

    private static TrafficSelector.Builder selector(IpPrefix dst) {
        return DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4).matchIPDst(dst);
    }

    static TrafficTreatment toGroup(GroupId g) {
        return DefaultTrafficTreatment.builder().group(g).build();
    }

    /** An HMux bucket: the DIP's host as tunnel destination, out of the GRE port, with its weight. */
    GroupBucket hmuxBucket(DeviceId device, PortNumber tunnelPort, DipBucket b) {
        TrafficTreatment t = DefaultTrafficTreatment.builder()
                .extension(tunnelDst(device, Ip4Address.valueOf(b.endpoint)), device)
                .setOutput(tunnelPort)
                .build();
        return DefaultGroupBucket.createSelectGroupBucket(t, (short) b.weight);
    }

    private ExtensionTreatment tunnelDst(DeviceId device, Ip4Address dst) {
        try {
            ExtensionTreatmentResolver resolver = drivers.createHandler(device).behaviour(ExtensionTreatmentResolver.class);
            ExtensionTreatment ext = resolver.getExtensionInstruction(
                    ExtensionTreatmentType.ExtensionTreatmentTypes.NICIRA_SET_TUNNEL_DST.type());
            ext.setPropertyValue(TUNNEL_DST, dst);
            return ext;
        } catch (RuntimeException | org.onosproject.net.flow.instructions.ExtensionPropertyException e) {
            throw new SouthboundException(device + ": no Nicira set-tunnel-destination extension (not Open vSwitch?): "
                    + e.getMessage(), e);
        }
    }

    // ---- reading back ---------------------------------------------------------------------------

    static IpPrefix dstPrefix(FlowRule r) {
        Criterion c = r.selector().getCriterion(Criterion.Type.IPV4_DST);
        return c == null ? null : ((IPCriterion) c).ip();
    }

    /** The VIP of a {@code /32} destination match, or null. */
    static String dstHost(FlowRule r) {
        IpPrefix p = dstPrefix(r);
        return p != null && p.prefixLength() == 32 ? p.address().toString() : null;
    }

    /** The service an entry rule matches, or null when its selector is none the layout writes. */
    static ServiceMatch matchOf(FlowRule r) {
        String vip = dstHost(r);
        if (vip == null) {
            return null;
        }
        IPProtocolCriterion proto = (IPProtocolCriterion) r.selector().getCriterion(Criterion.Type.IP_PROTO);
        TcpPortCriterion tcp = (TcpPortCriterion) r.selector().getCriterion(Criterion.Type.TCP_DST);
        UdpPortCriterion udp = (UdpPortCriterion) r.selector().getCriterion(Criterion.Type.UDP_DST);
        try {
            if (proto == null) {
                return tcp == null && udp == null ? new ServiceMatch(vip, ServiceMatch.ANY, 0) : null;
            }
            String p = proto.protocol() == IPv4.PROTOCOL_TCP ? "tcp" : proto.protocol() == IPv4.PROTOCOL_UDP ? "udp" : null;
            int port = tcp != null ? tcp.tcpPort().toInt() : udp != null ? udp.udpPort().toInt() : 0;
            return p == null ? null : new ServiceMatch(vip, p, port);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The group a rule's treatment sends to, or null. */
    static GroupId groupOf(TrafficTreatment t) {
        List<Instruction> all = t.allInstructions();
        return all.size() == 1 && all.get(0) instanceof Instructions.GroupInstruction
                ? ((Instructions.GroupInstruction) all.get(0)).groupId() : null;
    }

    /** The tunnel destination of an HMux bucket out of {@code tunnelPort}, or null when the bucket is no such. */
    static String endpointOf(GroupBucket b, PortNumber tunnelPort) {
        List<Instruction> ins = b.treatment().allInstructions();
        if (ins.size() != 2 || !(ins.get(0) instanceof Instructions.ExtensionInstructionWrapper)
                || !Instructions.createOutput(tunnelPort).equals(ins.get(1))) {
            return null;
        }
        ExtensionTreatment ext = ((Instructions.ExtensionInstructionWrapper) ins.get(0)).extensionInstruction();
        try {
            Object dst = ext.getPropertyValue(TUNNEL_DST);
            return dst == null ? null : dst.toString();
        } catch (org.onosproject.net.flow.instructions.ExtensionPropertyException | RuntimeException e) {
            return null;
        }
    }
}
