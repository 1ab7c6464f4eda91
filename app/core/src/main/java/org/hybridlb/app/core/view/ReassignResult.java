package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Map;
import org.hybridlb.app.core.MigrationRecord;

/** {@code POST /reassign}: the migration it started (absent: nothing to move) and the assignment it aims at. */
@JsonPropertyOrder({"migration", "target", "lastError"})
public final class ReassignResult {
    public final MigrationRecord migration;
    /** VIP -> switch id or {@code smux}; absent when no assignment could be computed. */
    public final Map<String, String> target;
    public final String lastError;

    @JsonCreator
    public ReassignResult(@JsonProperty("migration") MigrationRecord migration,
                          @JsonProperty("target") Map<String, String> target,
                          @JsonProperty("lastError") String lastError) {
        this.migration = migration;
        this.target = target == null ? null : Views.map(target);
        this.lastError = lastError;
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
