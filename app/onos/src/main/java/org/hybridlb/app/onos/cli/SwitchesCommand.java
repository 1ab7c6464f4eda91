package org.hybridlb.app.onos.cli;

import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.view.SwitchView;

/**
 * Lists the fabric switches as the controller sees them: role, up (or why it counts as down),
 * drained, the VIPs each serves as HMux, and why a switch cannot be an HMux (e.g. its ONOS
 * driver lacks the Nicira extension, with the netcfg that fixes it). Same JSON as
 * {@code GET /switches}.
 */
@Service
@Command(scope = "onos", name = "hybridlb-switches",
        description = "Lists hybridlb fabric switches, and why one cannot serve as HMux")
public class SwitchesCommand extends HybridlbCommand<List<SwitchView>> {
    @Override
    protected List<SwitchView> call() {
        return api().switches();
    }

    @Override
    protected Object json(List<SwitchView> result) {
        return Map.of("switches", result);
    }

    @Override
    protected void printText(List<SwitchView> r) {
        for (SwitchView s : r) {
            print("%-10s role=%-4s up=%-5s drained=%-5s vips=%s", s.id, s.role, s.up, s.drained, Json.write(s.vips));
            if (s.cutOff != null) {
                print("  counts as down: %s", s.cutOff);
            }
            if (s.hmuxUnfit != null) {
                print("  cannot be an HMux: %s", s.hmuxUnfit);
            }
        }
    }
}
