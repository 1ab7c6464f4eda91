package org.hybridlb.app.onos.cli;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.view.ReassignResult;

/** Runs the assignment now and applies the migration it plans. */
@Service
@Command(scope = "onos", name = "hybridlb-reassign", description = "Re-assigns hybridlb VIPs now")
public class ReassignCommand extends HybridlbCommand<ReassignResult> {
    @Override
    protected ReassignResult call() {
        return api().reassignNow();
    }

    @Override
    protected void printText(ReassignResult r) {
        if (r.migration == null) {
            print("no migration running; target=%s", r.target == null ? "" : Json.write(r.target));
        } else {
            print("migration %d %s: %s", r.migration.id, r.migration.state, r.migration.trigger);
        }
        if (r.lastError != null) {
            print("lastError=%s", r.lastError);
        }
    }
}
