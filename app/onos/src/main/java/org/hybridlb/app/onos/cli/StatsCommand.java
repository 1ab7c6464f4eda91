package org.hybridlb.app.onos.cli;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.app.core.view.ControllerCounters;
import org.hybridlb.app.core.view.StatsView;

/** Per-VIP traffic and placement, the HMux/SMux split and the controller's counters. */
@Service
@Command(scope = "onos", name = "hybridlb-stats", description = "Shows hybridlb traffic statistics")
public class StatsCommand extends HybridlbCommand<StatsView> {
    @Override
    protected StatsView call() {
        return api().stats();
    }

    @Override
    protected void printText(StatsView r) {
        print("hmux=%s B/s smux=%s B/s hmuxShare=%s", num(r.hmuxBytesPerSecond), num(r.smuxBytesPerSecond),
                num(r.hmuxShare));
        for (StatsView.VipRate v : r.vips) {
            print("%-16s %s B/s on %s", v.vip, num(v.bytesPerSecond), v.placement);
        }
        ControllerCounters c = r.controller;
        print("reconciles=%d waves=%d rollbacks=%d failovers=%d repairs=%d", c.reconciles, c.wavesApplied,
                c.rollbacks, c.failovers, c.repairs);
    }
}
