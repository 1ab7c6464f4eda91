package org.hybridlb.app.core.port;

import java.util.Set;

/**
 * The host agents' Cheetah cookie configuration (smux/agent: {@code PUT /cookie}, the document of
 * {@code cookie_config.py}: this host's server id and its VIPs' keys).
 */
public interface HostCookieControl {
    /** What an agent answered to a {@code PUT /cookie}. */
    enum Answer {
        /** Taken: saved by the agent and loaded into its programs. */
        TAKEN,
        /** The agent runs without cookies (no {@code --cookie-config}, 404) or cannot run them (409). */
        NO_COOKIES
    }

    /** DIP hosts (tunnel endpoints) that have an agent to configure. */
    Set<String> hosts();

    /** Replaces {@code host}'s configuration; throws {@link SouthboundException} when it cannot. */
    Answer putCookies(String host, String document);

    /** No agents. */
    HostCookieControl NONE = new HostCookieControl() {
        @Override
        public Set<String> hosts() {
            return Set.of();
        }

        @Override
        public Answer putCookies(String host, String document) {
            throw new SouthboundException("no host agent for " + host);
        }
    };
}
