package org.hybridlb.app.onos.cli;

import java.util.List;
import java.util.Map;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/** Lists the VIPs (or one) with their services, DIPs and where each is installed. */
@Service
@Command(scope = "onos", name = "hybridlb-vips", description = "Lists hybridlb VIPs, their DIPs and placement")
public class VipsCommand extends HybridlbCommand<List<Vip>> {
    @Argument(name = "vip", description = "Only this VIP")
    @Completion(VipCompleter.class)
    String vip;

    @Override
    protected List<Vip> call() {
        return vip != null ? List.of(api().vip(vip)) : api().vips();
    }

    @Override
    protected Object json(List<Vip> result) {
        return Map.of("vips", result);
    }

    @Override
    protected void printText(List<Vip> result) {
        Map<String, String> installed = api().assignment().installed;
        for (Vip v : result) {
            String at = installed.get(v.vip);
            print("%s aggregate=%s on=%s%s", v.vip, v.aggregate, at == null ? "not installed" : at,
                    v.cheetah() ? " affinity=" + v.affinity + " mechanism=" + v.effectiveMechanism()
                            + " cookieHash=" + v.effectiveCookieHash() : "");
            for (VipPort p : v.ports) {
                StringBuilder dips = new StringBuilder();
                for (Dip d : p.dips) {
                    dips.append(dips.length() == 0 ? "" : " ").append(d.ip);
                    if (d.weight != 1) {
                        dips.append("(w").append(d.weight).append(')');
                    }
                }
                print("  %s/%d -> %s", p.proto, p.port, dips);
            }
        }
    }
}
