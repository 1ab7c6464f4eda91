package org.hybridlb.app.core.view;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import org.hybridlb.app.core.MigrationRecord;

/** {@code GET /migrations}: the migration in flight (absent when none) and the recent ones, newest first. */
@JsonPropertyOrder({"inFlight", "recent"})
public final class MigrationsView {
    public final MigrationRecord inFlight;
    public final List<MigrationRecord> recent;

    @JsonCreator
    public MigrationsView(@JsonProperty("inFlight") MigrationRecord inFlight,
                          @JsonProperty("recent") List<MigrationRecord> recent) {
        this.inFlight = inFlight;
        this.recent = Views.list(recent);
    }

    /** The JSON of the REST API. */
    @Override
    public String toString() {
        return org.hybridlb.app.core.Json.write(this);
    }
}
