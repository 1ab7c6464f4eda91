package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/** One switch of {@code GET /switches} (and the answer of a drain): its state and the VIPs it serves as HMux. */
@JsonPropertyOrder({"id", "role", "pod", "up", "cutOff", "drained", "hmuxUnfit", "hash", "decodesCookies", "vips"})
public final class SwitchView {
    public final String id;
    /** {@code core}, {@code agg} or {@code tor}. */
    public final String role;
    /** Absent for a core switch. */
    public final Integer pod;
    /** False when reported down or cut off from the served part of the fabric. */
    public final boolean up;
    /** Why a live switch counts as down (cut off from the served part), else absent. */
    public final String cutOff;
    public final boolean drained;
    /** Why it cannot be an HMux although meant to, else absent. */
    public final String hmuxUnfit;
    /** How the SMuxes hash and encapsulate to agree with it as HMux (its southbound's contract); absent when unknown. */
    public final Hash hash;
    /** Whether it can decode Cheetah cookies (read TCP options) as HMux. */
    public final boolean decodesCookies;
    public final List<String> vips;

    @JsonCreator
    public SwitchView(@JsonProperty("id") String id, @JsonProperty("role") String role,
                      @JsonProperty("pod") Integer pod, @JsonProperty("up") boolean up,
                      @JsonProperty("cutOff") String cutOff, @JsonProperty("drained") boolean drained,
                      @JsonProperty("hmuxUnfit") String hmuxUnfit, @JsonProperty("hash") Hash hash,
                      @JsonProperty("decodesCookies") boolean decodesCookies,
                      @JsonProperty("vips") List<String> vips) {
        this.id = id;
        this.role = role;
        this.pod = pod;
        this.up = up;
        this.cutOff = cutOff;
        this.drained = drained;
        this.hmuxUnfit = hmuxUnfit;
        this.hash = hash;
        this.decodesCookies = decodesCookies;
        this.vips = Views.list(vips);
    }

    /** A hash contract: the SMux's selection, basis and encapsulation, or why none can agree. */
    @JsonPropertyOrder({"selection", "basis", "encap", "noAgreement"})
    public static final class Hash {
        /** The SMux's {@code selection} ({@code ovs}, {@code ovs-dphash}, {@code crc32}); absent without agreement. */
        public final String selection;
        /** The hash basis as an unsigned decimal; absent when 0. */
        public final String basis;
        /** {@code gre} or {@code ipip}; absent without agreement. */
        public final String encap;
        /** Why no SMux can agree with the switch; absent when one can. */
        public final String noAgreement;

        @JsonCreator
        public Hash(@JsonProperty("selection") String selection, @JsonProperty("basis") String basis,
                    @JsonProperty("encap") String encap, @JsonProperty("noAgreement") String noAgreement) {
            this.selection = selection;
            this.basis = basis;
            this.encap = encap;
            this.noAgreement = noAgreement;
        }
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
