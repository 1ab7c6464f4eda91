package org.hybridlb.app.core.hmux;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;

/**
 * What an HMux needs to decode the Cheetah cookies of one service (p4/COOKIE-SPEC.md §4–§5): the
 * hash mode and key its hosts encode with, and the servers it accepts: each server id of the pool
 * (the same set the SMuxes accept, drained DIPs included) with the tunnel endpoint it stands for and
 * the bucket its packets are counted in. Only a switch that decodes {@link #mode} is given one
 * ({@link SwitchCapability#holdable}).
 */
public final class CookieDecode {
    public final Cookie.HashMode mode;
    /** The 128-bit key, as {@link Cookie#formatKey} writes it. */
    public final String key;
    public final SortedMap<Integer, Server> servers;

    /**
     * One accepted server id: where it is (the DIP host's tunnel endpoint) and the id of the bucket
     * its packets count in; on a switch that keeps no bucket ids, its position, -1 for a server of no
     * bucket (a drained DIP's: {@link SwitchCapability#holdable}).
     */
    public static final class Server {
        public final String endpoint;
        public final int bucket;

        public Server(String endpoint, int bucket) {
            this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
            this.bucket = bucket;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Server && endpoint.equals(((Server) o).endpoint) && bucket == ((Server) o).bucket;
        }

        @Override
        public int hashCode() {
            return Objects.hash(endpoint, bucket);
        }

        @Override
        public String toString() {
            return endpoint + "#" + bucket;
        }
    }

    public CookieDecode(Cookie.HashMode mode, String key, Map<Integer, Server> servers) {
        this.mode = Objects.requireNonNull(mode, "mode");
        this.key = Cookie.formatKey(Cookie.parseKey(Objects.requireNonNull(key, "key")));
        for (Integer id : servers.keySet()) {
            if (id < Cookie.SERVER_ID_MIN || id > Cookie.SERVER_ID_MAX) {
                throw new IllegalArgumentException("server id must be " + Cookie.SERVER_ID_MIN + ".."
                        + Cookie.SERVER_ID_MAX + ", got " + id);
            }
        }
        this.servers = Collections.unmodifiableSortedMap(new TreeMap<>(servers));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof CookieDecode)) {
            return false;
        }
        CookieDecode c = (CookieDecode) o;
        return mode == c.mode && key.equals(c.key) && servers.equals(c.servers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, key, servers);
    }

    /** Without the key (a secret: never in logs). */
    @Override
    public String toString() {
        List<String> s = new ArrayList<>();
        servers.forEach((id, v) -> s.add(id + "=" + v));
        return "cookies " + mode.wireName() + " " + s;
    }
}
