package org.hybridlb.app.onos.cli;

import java.util.ArrayList;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.onos.HybridlbService;
import org.hybridlb.solver.model.Vip;
import org.onosproject.cli.AbstractChoicesCompleter;
import org.onosproject.cli.AbstractShellCommand;

/** Completes VIP addresses. */
@Service
public class VipCompleter extends AbstractChoicesCompleter {
    HybridlbService service;

    @Override
    protected List<String> choices() {
        HybridlbService s = service != null ? service : AbstractShellCommand.get(HybridlbService.class);
        List<String> out = new ArrayList<>();
        for (Vip v : s.api().vips()) {
            out.add(v.vip);
        }
        return out;
    }
}
