package org.hybridlb.app.core.cheetah;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * Allocates server ids and keys (COOKIE-SPEC §4, §8) in a {@link CookieState}.
 *
 * <ul>
 * <li>Every DIP host (tunnel endpoint) of every pool has one server id, in one space for the
 *     whole fabric, whatever its VIPs' affinity: host-side encoding can then be on for every VIP,
 *     so a VIP turned to {@code cheetah} needs no new ids. The lowest free id is given.</li>
 * <li>An id whose host is in no pool any more (desired or installed) is released into quarantine
 *     for {@link #QUARANTINE}: a connection to the removed host may still carry it, and a
 *     decoding mux must not send that connection to another host.</li>
 * <li>Each VIP gets a 128-bit key from {@link SecureRandom} the first time it is seen, whatever
 *     its affinity, and keeps it until it is removed: the host agents encode with it from the
 *     start, so a VIP turned to {@code cheetah} is decoded with the key its hosts already use
 *     and no live connection's cookie turns invalid (COOKIE-SPEC §9). Only cheetah VIPs' keys
 *     reach the SMuxes.</li>
 * </ul>
 */
public final class CookieRegistry {
    /**
     * How long a released server id stays unused: longer than any connection to a removed host
     * can live on (its clients give up within their retransmission limit, about 15 min with
     * Linux's {@code tcp_retries2}; the host agent's keep-alive closes an idle one within about
     * 4 min). COOKIE-SPEC §4.
     */
    public static final Duration QUARANTINE = Duration.ofHours(1);

    private final LongSupplier clock;
    private final SecureRandom random;

    public CookieRegistry(LongSupplier clockMillis, SecureRandom random) {
        this.clock = clockMillis;
        this.random = random;
    }

    public CookieRegistry() {
        this(System::currentTimeMillis, new SecureRandom());
    }

    /**
     * Brings {@code s} in line with {@code vips} (the desired and the installed VIPs: a host
     * still installed keeps its id): releases, ends quarantines, allocates; returns whether
     * anything changed. Throws IllegalStateException when no id is free (ids already given stay).
     */
    public boolean update(CookieState s, Collection<Vip> vips) {
        long now = clock.getAsLong();
        Set<String> hosts = new TreeSet<>();
        Set<String> vipAddresses = new TreeSet<>();
        for (Vip v : vips) {
            vipAddresses.add(v.vip);
            for (VipPort p : v.ports) {
                for (Dip d : p.dips) {
                    hosts.add(d.tunnelEndpoint());
                }
            }
        }
        boolean changed = false;
        for (Iterator<Map.Entry<String, Integer>> it = s.serverIds.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, Integer> e = it.next();
            if (!hosts.contains(e.getKey())) {
                s.quarantined.put(e.getValue(), now + QUARANTINE.toMillis());
                it.remove();
                changed = true;
            }
        }
        changed |= s.quarantined.values().removeIf(until -> until <= now);
        Set<Integer> taken = new TreeSet<>(s.serverIds.values());
        taken.addAll(s.quarantined.keySet());
        int next = Cookie.SERVER_ID_MIN;
        for (String host : hosts) {
            if (s.serverIds.containsKey(host)) {
                continue;
            }
            while (taken.contains(next)) {
                next++;
            }
            if (next > Cookie.SERVER_ID_MAX) {
                throw new IllegalStateException("no free Cheetah server id for host " + host + ": "
                        + s.serverIds.size() + " hosts and " + s.quarantined.size() + " ids in quarantine use all "
                        + Cookie.SERVER_ID_MAX);
            }
            s.serverIds.put(host, next);
            taken.add(next);
            changed = true;
        }
        if (s.hostDefaultKey == null) {
            s.hostDefaultKey = newKey();
            changed = true;
        }
        changed |= s.keys.keySet().retainAll(vipAddresses);
        for (String vip : vipAddresses) {
            if (!s.keys.containsKey(vip)) {
                s.keys.put(vip, newKey());
                changed = true;
            }
        }
        return changed;
    }

    private String newKey() {
        byte[] key = new byte[Cookie.KEY_BYTES];
        random.nextBytes(key);
        return Cookie.formatKey(key);
    }
}
