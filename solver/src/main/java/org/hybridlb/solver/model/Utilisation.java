package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Per-resource utilisation of an assignment, as fractions of capacity (links count against 80%
 * of their bandwidth, Duet §3.4). {@code top} lists the most loaded resources, highest first.
 */
public final class Utilisation {
    public final double maxLink;
    public final double maxSwitchMemory;
    public final double maxHostTable;
    public final List<ResourceUse> top;

    @JsonCreator
    public Utilisation(@JsonProperty("maxLink") double maxLink,
                       @JsonProperty("maxSwitchMemory") double maxSwitchMemory,
                       @JsonProperty("maxHostTable") double maxHostTable,
                       @JsonProperty("top") List<ResourceUse> top) {
        this.maxLink = maxLink;
        this.maxSwitchMemory = maxSwitchMemory;
        this.maxHostTable = maxHostTable;
        this.top = top == null ? List.of() : List.copyOf(top);
    }

    /** One resource and its utilisation. */
    public static final class ResourceUse {
        /** "link", "ecmp", "tunnel" or "host". */
        public final String kind;
        /** Link "a-b" or switch id. */
        public final String resource;
        public final double utilisation;

        @JsonCreator
        public ResourceUse(@JsonProperty("kind") String kind,
                           @JsonProperty("resource") String resource,
                           @JsonProperty("utilisation") double utilisation) {
            this.kind = kind;
            this.resource = resource;
            this.utilisation = utilisation;
        }
    }
}
