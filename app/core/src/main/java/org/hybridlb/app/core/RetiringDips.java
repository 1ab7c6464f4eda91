package org.hybridlb.app.core;

import java.time.Duration;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.logging.Logger;
import org.hybridlb.app.core.cheetah.CookieState;
import org.hybridlb.app.core.cheetah.CookieState.Retiring;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * A DIP removed from a cheetah VIP drains before it leaves: a mux accepts a cookie only if its
 * server "is or was" in the VIP's pool (COOKIE-SPEC §4), and the SMuxes know the pool only from
 * their table. So a DIP the operator removes stays in the data path's pool at weight 0 (no new
 * connection, every live one decoded to it) for {@link #DRAIN}, then goes. A DIP that fails its
 * health check leaves at once, as in every VIP: its connections are gone with it. Loop thread only.
 */
final class RetiringDips {
    private static final Logger LOG = Logger.getLogger(RetiringDips.class.getName());

    /**
     * How long a removed DIP of a cheetah VIP keeps its live connections. A connection that lives
     * longer is cut when it ends; drain first (weight 0) and remove once the DIP is idle to keep it.
     */
    static final Duration DRAIN = Duration.ofMinutes(15);

    private final LongSupplier clock;

    RetiringDips(LongSupplier clockMillis) {
        this.clock = clockMillis;
    }

    /**
     * Brings {@code s.retiring} in line: a DIP the installed cheetah VIP serves with weight that the
     * desired one no longer lists starts draining; one desired again, of a VIP gone or no longer cheetah, or past
     * its time, stops. Returns whether anything changed (persist it).
     */
    boolean update(CookieState s, List<Vip> desired, Map<String, Vip> installed) {
        long now = clock.getAsLong();
        boolean changed = false;
        Set<String> known = new HashSet<>();
        for (Iterator<Retiring> it = s.retiring.iterator(); it.hasNext();) {
            Retiring r = it.next();
            Vip want = find(desired, r.vip);
            if (r.until <= now || want == null || !want.cheetah() || !hasService(want, r.service)
                    || VipConfigs.dip(want, r.service, r.ip) != null) {
                LOG.info("DIP " + r.ip + " of cheetah VIP " + r.vip + " " + r.service + " leaves the SMuxes' pool"
                        + (r.until <= now ? " (drained " + DRAIN.toMinutes() + " min)" : ""));
                it.remove();
                changed = true;
            } else {
                known.add(r.vip + " " + r.service + " " + r.ip);
            }
        }
        for (Vip want : desired) {
            Vip have = installed.get(want.vip);
            if (!want.cheetah() || have == null) {
                continue;
            }
            for (VipPort p : have.ports) {
                String service = VipConfigs.key(p);
                if (!hasService(want, service)) {
                    continue;
                }
                for (Dip d : p.dips) {
                    // weight 0 installed: drained already (by the operator, or this drain that just ended)
                    if (d.weight > 0 && VipConfigs.dip(want, service, d.ip) == null && known.add(want.vip + " " + service + " " + d.ip)) {
                        s.retiring.add(new Retiring(want.vip, service, d.ip, d.hostIp, now + DRAIN.toMillis()));
                        LOG.info("DIP " + d.ip + " removed from cheetah VIP " + want.vip + " " + service
                                + ": weight 0 on the SMuxes for " + DRAIN.toMinutes() + " min, so its live connections stay");
                        changed = true;
                    }
                }
            }
        }
        return changed;
    }

    /** {@code target} with the draining DIPs back, at weight 0, where their VIP and service are. */
    static Map<String, Vip> withDraining(CookieState s, Map<String, Vip> target) {
        for (Retiring r : s.retiring) {
            Vip v = target.get(r.vip);
            if (v != null && hasService(v, r.service) && VipConfigs.dip(v, r.service, r.ip) == null) {
                target.put(r.vip, VipConfigs.withDip(v, r.service, new Dip(r.ip, 0, r.hostIp)));
            }
        }
        return target;
    }

    private static Vip find(List<Vip> vips, String vip) {
        for (Vip v : vips) {
            if (v.vip.equals(vip)) {
                return v;
            }
        }
        return null;
    }

    private static boolean hasService(Vip v, String service) {
        return v.ports.stream().anyMatch(p -> VipConfigs.key(p).equals(service));
    }
}
