package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** Shows the migration in flight and the recent ones, wave by wave. */
@Service
@Command(scope = "onos", name = "hybridlb-migrations", description = "Shows hybridlb migrations")
public class MigrationsCommand extends HybridlbCommand {
    @Override
    protected Object call() {
        return api().migrations();
    }

    @Override
    protected void printText(JsonNode r) {
        JsonNode f = r.path("inFlight");
        print("in flight: %s", f.isNull() || f.isMissingNode() ? "none" : "#" + f.path("id").asLong());
        for (JsonNode m : r.path("recent")) {
            print("#%d %s: %s%s", m.path("id").asLong(), m.path("state").asText(), m.path("trigger").asText(),
                    m.hasNonNull("error") ? " (" + m.path("error").asText() + ")" : "");
            for (JsonNode w : m.path("plan").path("waves")) {
                StringBuilder steps = new StringBuilder();
                for (JsonNode s : w.path("steps")) {
                    steps.append(steps.length() == 0 ? "" : "; ").append(s.path("action").asText()).append(' ')
                            .append(s.path("vip").asText());
                    if (s.hasNonNull("switchId")) {
                        steps.append(" @").append(s.path("switchId").asText());
                    }
                    if (s.hasNonNull("dip")) {
                        steps.append(" dip ").append(s.path("dip").asText());
                    }
                }
                print("  wave %d %s: %s", w.path("wave").asInt(), w.path("phase").asText(), steps);
            }
        }
    }
}
