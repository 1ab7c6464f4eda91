package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.databind.JsonNode;
import org.hybridlb.app.core.port.SouthboundException;

/**
 * The admin API of Prism front ends ({@code smux/prism/frontend/prism_fe.py --admin}), by base URL.
 * Every call throws {@link SouthboundException} when the front end cannot be reached or answers
 * with an error; {@link Refused} when it refuses a rule document (400, its reason names the field;
 * 401/403: this client's certificate may not write).
 */
public interface PrismFrontEnds {
    /** {@code GET /rules}: the rule document in force. */
    JsonNode rules(String admin);

    /** {@code PUT /rules}: the front end validates it whole and swaps it in, or refuses it and keeps its rules. */
    void putRules(String admin, String document);

    /** {@code GET /stats}: counters, per backend {address, up, owned, handoffs}, steering counters. */
    JsonNode stats(String admin);

    /** {@code GET /connections}: each connection's id, client, state and owner. */
    JsonNode connections(String admin);

    /** A rule document the front end refused (HTTP 400, 401 or 403). */
    final class Refused extends SouthboundException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }
    }
}
