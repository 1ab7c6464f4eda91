package org.hybridlb.app.onos.cli;

import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.prism.PrismText;

/**
 * The Prism hand-off controller: each Prism VIP's front ends (rules in force, hand-off counters) and
 * backends (host health, load); with a VIP and {@code --connections}, who owns each connection now;
 * with {@code --pins}, its fabric steering pins.
 */
@Service
@Command(scope = "onos", name = "hybridlb-prism", description = "Shows hybridlb Prism VIPs, front ends, backends and connections")
public class PrismCommand extends HybridlbCommand<Object> {
    @Argument(name = "vip", description = "Only this VIP")
    @Completion(VipCompleter.class)
    String vip;

    @Option(name = "-c", aliases = "--connections", description = "The VIP's connections and their owners")
    boolean connections;

    @Option(name = "-p", aliases = "--pins", description = "The VIP's fabric steering pins (steering: fabric)")
    boolean pins;

    @Override
    protected Object call() {
        if (vip == null) {
            return api().prismVips();
        }
        return pins ? api().prismPins(vip) : connections ? api().prismConnections(vip) : api().prismVip(vip);
    }

    @Override
    protected Object json(Object result) {
        if (vip == null) {
            return Map.of("vips", result);
        }
        return pins ? Map.of("pins", result) : connections ? Map.of("connections", result) : result;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void printText(Object r) {
        String text = vip == null ? PrismText.vips((List<org.hybridlb.app.core.prism.PrismVipView>) r)
                : pins ? PrismText.pins((List<org.hybridlb.app.core.prism.PrismPin>) r)
                : connections ? PrismText.connections((List<org.hybridlb.app.core.prism.PrismConnectionView>) r)
                : PrismText.vip((org.hybridlb.app.core.prism.PrismVipView) r);
        print("%s", text.stripTrailing());
    }
}
