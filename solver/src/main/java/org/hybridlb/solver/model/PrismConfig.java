package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;

/**
 * The Prism request hand-off of a VIP ({@code smux/prism}): its front ends and the rule document
 * they run. {@code backends} and {@code rules} are kept as the JSON trees they came in: they are the
 * front end's own rule format ({@code smux/prism/frontend/rules.py}, the VIP schema's
 * {@code prismRule}), handed to the front ends as they are, so there is one definition of it.
 */
@JsonPropertyOrder({"frontends", "backends", "rules", "steering"})
public final class PrismConfig {
    /** Steering by the front-end host's agent (the default). */
    public static final String STEERING_AGENT = "agent";
    /** Steering by per-flow pins the controller installs in the fabric. */
    public static final String STEERING_FABRIC = "fabric";
    /** Steering by the Cheetah cookie the owner's host agent writes (a cheetah VIP; no state per flow). */
    public static final String STEERING_COOKIE = "cookie";

    public final List<PrismFrontend> frontends;
    /** {@link #STEERING_AGENT}, {@link #STEERING_FABRIC} or {@link #STEERING_COOKIE} (the schema allows nothing else). */
    public final String steering;
    private final JsonNode backends;
    private final JsonNode rules;

    @JsonCreator
    public PrismConfig(@JsonProperty("frontends") List<PrismFrontend> frontends,
                       @JsonProperty("backends") JsonNode backends,
                       @JsonProperty("rules") JsonNode rules,
                       @JsonProperty("steering") String steering) {
        this.frontends = List.copyOf(frontends);
        this.steering = steering != null ? steering : STEERING_AGENT;
        this.backends = backends.deepCopy();
        this.rules = rules.deepCopy();
    }

    /** Whether the fabric steers the VIP's handed-off flows (controller pins), not the front-end host's agent. */
    @JsonIgnore
    public boolean fabricSteering() {
        return STEERING_FABRIC.equals(steering);
    }

    /** Whether the owner's host agent steers by the Cheetah cookie it writes (mode c). */
    @JsonIgnore
    public boolean cookieSteering() {
        return STEERING_COOKIE.equals(steering);
    }

    /** backend name -> {address, controlPort} (a copy). */
    @JsonProperty("backends")
    public JsonNode backends() {
        return backends.deepCopy();
    }

    /** The rules, in document order (a copy). */
    @JsonProperty("rules")
    public JsonNode rules() {
        return rules.deepCopy();
    }

    /** The rule document a front end takes ({@code PUT /rules}): {@code {"backends", "rules"}}. */
    @JsonIgnore
    public ObjectNode ruleDocument() {
        ObjectNode doc = JsonNodeFactory.instance.objectNode();
        doc.set("backends", backends());
        doc.set("rules", rules());
        return doc;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof PrismConfig)) {
            return false;
        }
        PrismConfig p = (PrismConfig) o;
        return frontends.equals(p.frontends) && backends.equals(p.backends) && rules.equals(p.rules)
                && steering.equals(p.steering);
    }

    @Override
    public int hashCode() {
        return Objects.hash(frontends, backends, rules, steering);
    }
}
