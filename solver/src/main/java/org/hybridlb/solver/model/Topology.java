package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** The fabric: switches, links, hosts and SMuxes (ARCHITECTURE "shared data model"). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class Topology {
    public final String name;
    public final List<Switch> switches;
    public final List<Link> links;
    public final List<Host> hosts;
    public final List<Smux> smuxes;

    @JsonCreator
    public Topology(@JsonProperty("name") String name,
                    @JsonProperty("switches") List<Switch> switches,
                    @JsonProperty("links") List<Link> links,
                    @JsonProperty("hosts") List<Host> hosts,
                    @JsonProperty("smuxes") List<Smux> smuxes) {
        this.name = name;
        this.switches = List.copyOf(switches);
        this.links = List.copyOf(links);
        this.hosts = hosts == null ? List.of() : List.copyOf(hosts);
        this.smuxes = smuxes == null ? List.of() : List.copyOf(smuxes);
    }
}
