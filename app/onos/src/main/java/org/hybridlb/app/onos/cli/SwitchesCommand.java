package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * Lists the fabric switches as the controller sees them: role, up (or why it counts as down),
 * drained, the VIPs each serves as HMux, and why a switch cannot be an HMux (e.g. its ONOS
 * driver lacks the Nicira extension, with the netcfg that fixes it). Same JSON as
 * {@code GET /switches}.
 */
@Service
@Command(scope = "onos", name = "hybridlb-switches",
        description = "Lists hybridlb fabric switches, and why one cannot serve as HMux")
public class SwitchesCommand extends HybridlbCommand {
    @Override
    protected Object call() {
        return Map.of("switches", api().switches());
    }

    @Override
    protected void printText(JsonNode r) {
        for (JsonNode s : r.path("switches")) {
            print("%-10s role=%-4s up=%-5s drained=%-5s vips=%s", s.path("id").asText(), s.path("role").asText(),
                    s.path("up").asBoolean(), s.path("drained").asBoolean(), s.path("vips"));
            if (!s.path("cutOff").isNull() && !s.path("cutOff").isMissingNode()) {
                print("  counts as down: %s", s.path("cutOff").asText());
            }
            if (!s.path("hmuxUnfit").isNull() && !s.path("hmuxUnfit").isMissingNode()) {
                print("  cannot be an HMux: %s", s.path("hmuxUnfit").asText());
            }
        }
    }
}
