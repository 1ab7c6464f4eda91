package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** Lists the VIPs (or one) with their services, DIPs and where each is installed. */
@Service
@Command(scope = "onos", name = "hybridlb-vips", description = "Lists hybridlb VIPs, their DIPs and placement")
public class VipsCommand extends HybridlbCommand {
    @Argument(name = "vip", description = "Only this VIP")
    @Completion(VipCompleter.class)
    String vip;

    @Override
    protected Object call() {
        if (vip != null) {
            return Map.of("vips", List.of(api().vip(vip)));
        }
        return Map.of("vips", api().vips());
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void printText(JsonNode result) {
        Map<String, String> installed = (Map<String, String>) api().assignment().get("installed");
        for (JsonNode v : result.path("vips")) {
            String at = installed.get(v.path("vip").asText());
            print("%s aggregate=%s on=%s", v.path("vip").asText(), v.path("aggregate").asText(),
                    at == null ? "not installed" : at);
            for (JsonNode p : v.path("ports")) {
                StringBuilder dips = new StringBuilder();
                for (JsonNode d : p.path("dips")) {
                    dips.append(dips.length() == 0 ? "" : " ").append(d.path("ip").asText());
                    if (d.path("weight").asInt(1) != 1) {
                        dips.append("(w").append(d.path("weight").asInt()).append(')');
                    }
                }
                print("  %s/%d -> %s", p.path("proto").asText(), p.path("port").asInt(), dips);
            }
        }
    }
}
