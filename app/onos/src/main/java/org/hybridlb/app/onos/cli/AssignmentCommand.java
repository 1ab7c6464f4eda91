package org.hybridlb.app.onos.cli;

import java.util.Map;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.view.AssignmentView;

/** Shows where every VIP is installed and where the last assignment wants it. */
@Service
@Command(scope = "onos", name = "hybridlb-assignment", description = "Shows the hybridlb VIP assignment")
public class AssignmentCommand extends HybridlbCommand<AssignmentView> {
    @Override
    protected AssignmentView call() {
        return api().assignment();
    }

    @Override
    protected void printText(AssignmentView r) {
        print("algorithm=%s mru=%s hmuxTrafficShare=%s smuxCount=%s migrating=%s",
                r.algorithm == null ? "-" : r.algorithm, num(r.mru), num(r.hmuxTrafficShare),
                r.smuxCount == null ? "-" : r.smuxCount, r.migrating);
        print("downSwitches=%s unhealthyDips=%s", Json.write(r.downSwitches), Json.write(r.unhealthyDips));
        r.cutOffSwitches.forEach((sw, why) -> print("%s counts as down: %s", sw, why));
        r.hmuxUnfit.forEach((sw, why) -> print("%s cannot be an HMux: %s", sw, why));
        if (r.lastError != null) {
            print("lastError=%s", r.lastError);
        }
        for (Map.Entry<String, String> e : r.installed.entrySet()) {
            print("%-16s installed=%-12s target=%s", e.getKey(), e.getValue(),
                    r.target == null ? "-" : r.target.getOrDefault(e.getKey(), "-"));
        }
    }
}
