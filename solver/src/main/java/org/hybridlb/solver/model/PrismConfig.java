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
@JsonPropertyOrder({"frontends", "backends", "rules"})
public final class PrismConfig {
    public final List<PrismFrontend> frontends;
    private final JsonNode backends;
    private final JsonNode rules;

    @JsonCreator
    public PrismConfig(@JsonProperty("frontends") List<PrismFrontend> frontends,
                       @JsonProperty("backends") JsonNode backends,
                       @JsonProperty("rules") JsonNode rules) {
        this.frontends = List.copyOf(frontends);
        this.backends = backends.deepCopy();
        this.rules = rules.deepCopy();
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
        return frontends.equals(p.frontends) && backends.equals(p.backends) && rules.equals(p.rules);
    }

    @Override
    public int hashCode() {
        return Objects.hash(frontends, backends, rules);
    }
}
