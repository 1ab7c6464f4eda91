package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** Runs the assignment now and applies the migration it plans. */
@Service
@Command(scope = "onos", name = "hybridlb-reassign", description = "Re-assigns hybridlb VIPs now")
public class ReassignCommand extends HybridlbCommand {
    @Override
    protected Object call() {
        return api().reassignNow();
    }

    @Override
    protected void printText(JsonNode r) {
        JsonNode m = r.path("migration");
        if (m.isMissingNode() || m.isNull()) {
            print("no migration running; target=%s", r.path("target"));
        } else {
            print("migration %d %s: %s", m.path("id").asLong(), m.path("state").asText(), m.path("trigger").asText());
        }
        if (r.has("lastError")) {
            print("lastError=%s", r.path("lastError").asText());
        }
    }
}
