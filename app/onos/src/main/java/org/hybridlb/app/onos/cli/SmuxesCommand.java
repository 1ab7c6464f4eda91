package org.hybridlb.app.onos.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.view.SmuxView;

/** Lists the SMuxes: address, ToR, liveness (route service) and table version. */
@Service
@Command(scope = "onos", name = "hybridlb-smuxes", description = "Lists hybridlb SMuxes")
public class SmuxesCommand extends HybridlbCommand<List<SmuxView>> {
    @Argument(name = "smux", description = "Only this SMux")
    @Completion(SmuxCompleter.class)
    String smux;

    @Override
    protected List<SmuxView> call() {
        List<SmuxView> out = new ArrayList<>();
        for (SmuxView s : api().smuxes()) {
            if (smux == null || smux.equals(s.id)) {
                out.add(s);
            }
        }
        return out;
    }

    @Override
    protected Object json(List<SmuxView> result) {
        return Map.of("smuxes", result);
    }

    @Override
    protected void printText(List<SmuxView> r) {
        for (SmuxView s : r) {
            print("%-10s ip=%-15s tor=%-10s live=%-5s tableVersion=%d vips=%d", s.id, s.ip, s.tor, s.live,
                    s.tableVersion, s.vips);
        }
    }
}
