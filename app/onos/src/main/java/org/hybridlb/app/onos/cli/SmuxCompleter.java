package org.hybridlb.app.onos.cli;

import java.util.ArrayList;
import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.onos.HybridlbService;
import org.onosproject.cli.AbstractChoicesCompleter;
import org.onosproject.cli.AbstractShellCommand;

/** Completes SMux ids. */
@Service
public class SmuxCompleter extends AbstractChoicesCompleter {
    HybridlbService service;

    @Override
    protected List<String> choices() {
        HybridlbService s = service != null ? service : AbstractShellCommand.get(HybridlbService.class);
        return new ArrayList<>(s.smuxIds());
    }
}
