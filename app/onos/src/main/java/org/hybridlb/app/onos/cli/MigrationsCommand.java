package org.hybridlb.app.onos.cli;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.MigrationRecord;
import org.hybridlb.app.core.view.MigrationsView;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;

/** Shows the migration in flight and the recent ones, wave by wave. */
@Service
@Command(scope = "onos", name = "hybridlb-migrations", description = "Shows hybridlb migrations")
public class MigrationsCommand extends HybridlbCommand<MigrationsView> {
    @Override
    protected MigrationsView call() {
        return api().migrations();
    }

    @Override
    protected void printText(MigrationsView r) {
        print("in flight: %s", r.inFlight == null ? "none" : "#" + r.inFlight.id);
        for (MigrationRecord m : r.recent) {
            print("#%d %s: %s%s", m.id, m.state, m.trigger, m.error != null ? " (" + m.error + ")" : "");
            for (MigrationWave w : m.plan == null ? java.util.List.<MigrationWave>of() : m.plan.waves) {
                StringBuilder steps = new StringBuilder();
                for (MigrationStep s : w.steps) {
                    steps.append(steps.length() == 0 ? "" : "; ").append(s.action.json()).append(' ').append(s.vip);
                    if (s.switchId != null) {
                        steps.append(" @").append(s.switchId);
                    }
                    if (s.dip != null) {
                        steps.append(" dip ").append(s.dip);
                    }
                }
                print("  wave %d %s: %s", w.wave, w.phase, steps);
            }
        }
    }
}
