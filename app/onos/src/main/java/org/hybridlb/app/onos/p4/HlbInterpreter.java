package org.hybridlb.app.onos.p4;

import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_ANY_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_DST_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_PROTOCOL;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_WHOLE;
import static org.hybridlb.app.core.p4.HlbP4Info.NOACTION;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_DROP_NO_ROUTE;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import org.onosproject.net.DeviceId;
import org.onosproject.net.driver.AbstractHandlerBehaviour;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.packet.InboundPacket;
import org.onosproject.net.packet.OutboundPacket;
import org.onosproject.net.pi.model.PiActionId;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.runtime.PiAction;
import org.onosproject.net.pi.runtime.PiPacketOperation;

/**
 * The interpreter of the hybridlb P4 programs. The app's own rules are written in P4 terms
 * (PiCriterion, PiAction, action profile groups: {@code P4OnosForm}), which ONOS passes through
 * unchanged; what is left to interpret is what other ONOS apps may write with ONOS's protocol-neutral
 * selectors and treatments:
 *
 * <ul>
 * <li>criteria: IPv4 destination, IP protocol and TCP/UDP destination port are the programs'
 *     {@code dst_addr}, {@code protocol} and {@code dst_port} (every table names them alike);</li>
 * <li>flow-rule table 0 is {@code routing_v4}, and a treatment that does nothing there (drop) is
 *     its {@code drop_no_route}; a treatment that outputs to a port cannot be expressed (routes set
 *     a next id, the ECMP selector picks the port) and is refused with why;</li>
 * <li>no packet-in or packet-out: the programs have no CPU port, so ONOS's LLDP/ARP packet services
 *     do not run on these devices (links come from the netcfg, hosts from the app's config).</li>
 * </ul>
 */
public class HlbInterpreter extends AbstractHandlerBehaviour implements PiPipelineInterpreter {
    private static final Map<Criterion.Type, PiMatchFieldId> CRITERIA = Map.of(
            Criterion.Type.IPV4_DST, PiMatchFieldId.of(HMUX_VIP_SERVICE_DST_ADDR),
            Criterion.Type.IP_PROTO, PiMatchFieldId.of(HMUX_VIP_SERVICE_PROTOCOL),
            Criterion.Type.TCP_DST, PiMatchFieldId.of(HMUX_VIP_SERVICE_DST_PORT),
            Criterion.Type.UDP_DST, PiMatchFieldId.of(HMUX_VIP_SERVICE_DST_PORT));
    static final PiTableId TABLE_0 = PiTableId.of(ROUTING_ROUTING_V4);
    private static final PiAction NO_ACTION = PiAction.builder().withId(PiActionId.of(NOACTION)).build();
    private static final PiAction DROP_NO_ROUTE = PiAction.builder().withId(PiActionId.of(ROUTING_DROP_NO_ROUTE)).build();
    private static final Map<PiTableId, PiAction> DEFAULTS = Map.of(
            TABLE_0, DROP_NO_ROUTE,
            PiTableId.of(HMUX_VIP_SERVICE), NO_ACTION,
            PiTableId.of(HMUX_VIP_SERVICE_ANY_PORT), NO_ACTION,
            PiTableId.of(HMUX_VIP_WHOLE), NO_ACTION);

    @Override
    public Optional<PiMatchFieldId> mapCriterionType(Criterion.Type type) {
        return Optional.ofNullable(CRITERIA.get(type));
    }

    @Override
    public Optional<PiTableId> mapFlowRuleTableId(int flowRuleTableId) {
        return flowRuleTableId == 0 ? Optional.of(TABLE_0) : Optional.empty();
    }

    @Override
    public PiAction mapTreatment(TrafficTreatment treatment, PiTableId piTableId) throws PiInterpreterException {
        if (!TABLE_0.equals(piTableId)) {
            throw new PiInterpreterException("table " + piTableId + " takes only P4 actions (PiAction), not " + treatment);
        }
        for (Instruction i : treatment.allInstructions()) {
            if (i.type() != Instruction.Type.NOACTION) {
                throw new PiInterpreterException(piTableId + ": instruction " + i.type() + " cannot be expressed:"
                        + " routes set a next id (HlbIngress.routing.set_next_id as a PiAction), the ECMP selector"
                        + " picks the port");
            }
        }
        return DROP_NO_ROUTE;
    }

    @Override
    public Collection<PiPacketOperation> mapOutboundPacket(OutboundPacket packet) throws PiInterpreterException {
        throw new PiInterpreterException("the hybridlb P4 programs have no CPU port: no packet-out");
    }

    @Override
    public InboundPacket mapInboundPacket(PiPacketOperation packetOperation, DeviceId deviceId)
            throws PiInterpreterException {
        throw new PiInterpreterException("the hybridlb P4 programs have no CPU port: no packet-in");
    }

    @Override
    public Optional<PiAction> getOriginalDefaultAction(PiTableId tableId) {
        return Optional.ofNullable(DEFAULTS.get(tableId));
    }
}
