package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * One reversible step of a migration: an action on a VIP, at a switch or for a DIP.
 * DIP steps carry everything needed to apply them and their inverse on their own: the service
 * ("proto/port", {@code any/0} for a VIP balanced as a whole), the weight and the host the DIP
 * is tunnelled to when it is not its own endpoint.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class MigrationStep {
    public final StepAction action;
    public final String vip;
    /** The HMux switch for announce/withdraw-on-hmux steps. */
    public final String switchId;
    /** The DIP for add/remove-dip steps. */
    public final String dip;
    /** The VIP service of a DIP step, "proto/port"; absent means "any/0" (the whole VIP). */
    public final String service;
    /** The WCMP weight of a DIP step; absent means 1. */
    public final Integer weight;
    /** The host a DIP is tunnelled to (virtualised clusters, §3.5.2); absent means the DIP itself. */
    public final String hostIp;

    public MigrationStep(StepAction action, String vip, String switchId, String dip) {
        this(action, vip, switchId, dip, null, null, null);
    }

    @JsonCreator
    public MigrationStep(@JsonProperty("action") StepAction action,
                         @JsonProperty("vip") String vip,
                         @JsonProperty("switchId") String switchId,
                         @JsonProperty("dip") String dip,
                         @JsonProperty("service") String service,
                         @JsonProperty("weight") Integer weight,
                         @JsonProperty("hostIp") String hostIp) {
        this.action = action;
        this.vip = vip;
        this.switchId = switchId;
        this.dip = dip;
        this.service = service;
        this.weight = weight;
        this.hostIp = hostIp;
    }

    public static MigrationStep announceOnSmux(String vip) {
        return new MigrationStep(StepAction.ANNOUNCE_ON_SMUX, vip, null, null);
    }

    public static MigrationStep withdrawFromSmux(String vip) {
        return new MigrationStep(StepAction.WITHDRAW_FROM_SMUX, vip, null, null);
    }

    public static MigrationStep announceOnHmux(String vip, String switchId) {
        return new MigrationStep(StepAction.ANNOUNCE_ON_HMUX, vip, switchId, null);
    }

    public static MigrationStep withdrawFromHmux(String vip, String switchId) {
        return new MigrationStep(StepAction.WITHDRAW_FROM_HMUX, vip, switchId, null);
    }

    /** An add-dip or remove-dip step for {@code dip} of {@code service}. */
    public static MigrationStep dipStep(StepAction action, String vip, ServiceKey service, Dip dip) {
        if (action != StepAction.ADD_DIP && action != StepAction.REMOVE_DIP) {
            throw new IllegalArgumentException(action + " is not a DIP step");
        }
        return new MigrationStep(action, vip, null, dip.ip, service.wholeVip() ? null : service.toString(),
                dip.weight == 1 ? null : dip.weight, dip.hostIp);
    }

    /** The service of a DIP step, "any/0" when absent. */
    public String serviceOrWhole() {
        return serviceKey().toString();
    }

    /** The service of a DIP step, {@link ServiceKey#WHOLE_VIP} when absent. */
    public ServiceKey serviceKey() {
        return service == null ? ServiceKey.WHOLE_VIP : ServiceKey.parse(service);
    }

    /** The DIP of a DIP step as a model object. */
    public Dip dipValue() {
        return new Dip(dip, weight, hostIp);
    }

    /** The step that rolls this one back. */
    public MigrationStep inverse() {
        return new MigrationStep(action.inverse(), vip, switchId, dip, service, weight, hostIp);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MigrationStep)) {
            return false;
        }
        MigrationStep s = (MigrationStep) o;
        return action == s.action && vip.equals(s.vip) && Objects.equals(switchId, s.switchId)
                && Objects.equals(dip, s.dip) && Objects.equals(service, s.service)
                && Objects.equals(weight, s.weight) && Objects.equals(hostIp, s.hostIp);
    }

    @Override
    public int hashCode() {
        return Objects.hash(action, vip, switchId, dip, service, weight, hostIp);
    }

    @Override
    public String toString() {
        return action.json() + " " + vip + (switchId != null ? " @" + switchId : "")
                + (dip != null ? " dip " + dip + (service != null ? " " + service : "")
                        + (weight != null ? " w" + weight : "") + (hostIp != null ? " via " + hostIp : "") : "");
    }
}
