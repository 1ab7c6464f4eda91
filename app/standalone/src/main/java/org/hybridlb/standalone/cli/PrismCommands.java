package org.hybridlb.standalone.cli;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.prism.PrismConnectionView;
import org.hybridlb.app.core.prism.PrismPin;
import org.hybridlb.app.core.prism.PrismText;
import org.hybridlb.app.core.prism.PrismVipView;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hybridlb prism [VIP] [--connections | --pins]}: the Prism hand-off controller's views. */
final class PrismCommands {
    private PrismCommands() {
    }

    @Command(name = "prism", description = "Prism VIPs: each front end (rules in force, hand-offs) and backend"
            + " (host health, load); with a VIP and --connections, who owns each of its connections now;"
            + " with --pins, its fabric steering pins.")
    static final class PrismCmd extends HybridlbCli.Sub {
        @Parameters(index = "0", arity = "0..1", paramLabel = "VIP", description = "one VIP (default: every Prism VIP)")
        String vip;

        @Option(names = "--connections", description = "the VIP's connections and their owners")
        boolean connections;

        @Option(names = "--pins", description = "the VIP's fabric steering pins (steering: fabric)")
        boolean pins;

        @Override
        JsonNode fetch() {
            if ((connections || pins) && vip == null) {
                throw new HybridlbCli.Failure(2, "hybridlb prism: " + (pins ? "--pins" : "--connections") + " needs a VIP");
            }
            if (connections && pins) {
                throw new HybridlbCli.Failure(2, "hybridlb prism: --connections or --pins, not both");
            }
            String path = vip == null ? "/prism" : "/prism/" + HybridlbCli.enc(vip)
                    + (connections ? "/connections" : pins ? "/pins" : "");
            return cli.call("GET", path, null, 200);
        }

        @Override
        String render(JsonNode n) {
            if (pins) {
                return PrismText.pins(Json.MAPPER.convertValue(n.get("pins"), new TypeReference<List<PrismPin>>() { }));
            }
            if (connections) {
                return PrismText.connections(Json.MAPPER.convertValue(n.get("connections"),
                        new TypeReference<List<PrismConnectionView>>() { }));
            }
            if (vip != null) {
                return PrismText.vip(Json.MAPPER.convertValue(n, PrismVipView.class));
            }
            return PrismText.vips(Json.MAPPER.convertValue(n,
                    new TypeReference<Map<String, List<PrismVipView>>>() { }).getOrDefault("vips", List.of()));
        }
    }
}
