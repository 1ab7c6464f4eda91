package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** Shows where every VIP is installed and where the last assignment wants it. */
@Service
@Command(scope = "onos", name = "hybridlb-assignment", description = "Shows the hybridlb VIP assignment")
public class AssignmentCommand extends HybridlbCommand {
    @Override
    protected Object call() {
        return api().assignment();
    }

    @Override
    protected void printText(JsonNode r) {
        print("algorithm=%s mru=%s hmuxTrafficShare=%s smuxCount=%s migrating=%s",
                r.path("algorithm").asText("-"), num(r.get("mru")), num(r.get("hmuxTrafficShare")),
                r.path("smuxCount").asText("-"), r.path("migrating").asBoolean());
        print("downSwitches=%s unhealthyDips=%s", r.path("downSwitches"), r.path("unhealthyDips"));
        r.path("cutOffSwitches").fields().forEachRemaining(e -> print("%s counts as down: %s", e.getKey(),
                e.getValue().asText()));
        r.path("hmuxUnfit").fields().forEachRemaining(e -> print("%s cannot be an HMux: %s", e.getKey(),
                e.getValue().asText()));
        if (r.has("lastError")) {
            print("lastError=%s", r.path("lastError").asText());
        }
        Iterator<Map.Entry<String, JsonNode>> it = r.path("installed").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            print("%-16s installed=%-12s target=%s", e.getKey(), e.getValue().asText(),
                    r.path("target").path(e.getKey()).asText("-"));
        }
    }
}
