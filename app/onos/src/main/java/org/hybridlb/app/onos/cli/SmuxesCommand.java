package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** Lists the SMuxes: address, ToR, liveness (route service) and table version. */
@Service
@Command(scope = "onos", name = "hybridlb-smuxes", description = "Lists hybridlb SMuxes")
public class SmuxesCommand extends HybridlbCommand {
    @Argument(name = "smux", description = "Only this SMux")
    @Completion(SmuxCompleter.class)
    String smux;

    @Override
    protected Object call() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> s : api().smuxes()) {
            if (smux == null || smux.equals(s.get("id"))) {
                out.add(s);
            }
        }
        return Map.of("smuxes", out);
    }

    @Override
    protected void printText(JsonNode r) {
        for (JsonNode s : r.path("smuxes")) {
            print("%-10s ip=%-15s tor=%-10s live=%-5s tableVersion=%d vips=%d", s.path("id").asText(),
                    s.path("ip").asText(), s.path("tor").asText(), s.path("live").asBoolean(),
                    s.path("tableVersion").asLong(), s.path("vips").asInt());
        }
    }
}
