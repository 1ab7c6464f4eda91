package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** Per-VIP traffic and placement, the HMux/SMux split and the controller's counters. */
@Service
@Command(scope = "onos", name = "hybridlb-stats", description = "Shows hybridlb traffic statistics")
public class StatsCommand extends HybridlbCommand {
    @Override
    protected Object call() {
        return api().stats();
    }

    @Override
    protected void printText(JsonNode r) {
        print("hmux=%s B/s smux=%s B/s hmuxShare=%s", num(r.get("hmuxBytesPerSecond")),
                num(r.get("smuxBytesPerSecond")), num(r.get("hmuxShare")));
        for (JsonNode v : r.path("vips")) {
            print("%-16s %s B/s on %s", v.path("vip").asText(), num(v.get("bytesPerSecond")),
                    v.path("placement").asText());
        }
        JsonNode c = r.path("controller");
        print("reconciles=%d waves=%d rollbacks=%d failovers=%d repairs=%d", c.path("reconciles").asLong(),
                c.path("wavesApplied").asLong(), c.path("rollbacks").asLong(), c.path("failovers").asLong(),
                c.path("repairs").asLong());
    }
}
