package org.hybridlb.app.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * One DIP of a pool as the data path sees it. {@code bucketId} is stable for the DIP's life in
 * the pool and is the same on the HMux (OVS select-group bucket id) and on the SMuxes, so both
 * hash a connection to the same DIP (Duet §3.3.3) and removing a bucket moves only its flows.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class Bucket {
    public final String ip;
    public final int weight;
    public final String hostIp;
    public final int bucketId;
    /** The Cheetah server id of its host: only in an SMux table's cheetah VIPs (COOKIE-SPEC §4). */
    public final Integer serverId;

    public Bucket(String ip, Integer weight, String hostIp, int bucketId) {
        this(ip, weight, hostIp, bucketId, null);
    }

    @JsonCreator
    public Bucket(@JsonProperty("ip") String ip, @JsonProperty("weight") Integer weight,
                  @JsonProperty("hostIp") String hostIp, @JsonProperty("bucketId") int bucketId,
                  @JsonProperty("serverId") Integer serverId) {
        this.ip = ip;
        this.weight = weight == null ? 1 : weight;
        this.hostIp = hostIp;
        this.bucketId = bucketId;
        this.serverId = serverId;
    }

    /** The same bucket carrying its host's server id. */
    public Bucket withServerId(int id) {
        return new Bucket(ip, weight, hostIp, bucketId, id);
    }

    /** The address packets are encapsulated towards. */
    public String tunnelEndpoint() {
        return hostIp != null ? hostIp : ip;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Bucket)) {
            return false;
        }
        Bucket b = (Bucket) o;
        return ip.equals(b.ip) && weight == b.weight && Objects.equals(hostIp, b.hostIp) && bucketId == b.bucketId
                && Objects.equals(serverId, b.serverId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ip, weight, hostIp, bucketId, serverId);
    }

    @Override
    public String toString() {
        return ip + "#" + bucketId + (weight != 1 ? " w" + weight : "") + (hostIp != null ? " via " + hostIp : "")
                + (serverId != null ? " id" + serverId : "");
    }
}
