package org.hybridlb.app.core.prism;

import java.util.List;
import java.util.Locale;

/** The Prism views as the text both command lines print (hybridlb prism, Karaf hybridlb:prism). */
public final class PrismText {
    private PrismText() {
    }

    /** Each VIP: its front ends, then its backends. */
    public static String vips(List<PrismVipView> vips) {
        if (vips.isEmpty()) {
            return "no Prism VIPs\n";
        }
        StringBuilder b = new StringBuilder();
        for (PrismVipView v : vips) {
            b.append(b.length() == 0 ? "" : "\n").append(vip(v));
        }
        return b.toString();
    }

    public static String vip(PrismVipView v) {
        StringBuilder b = new StringBuilder("VIP ").append(v.vip).append('\n');
        b.append(row("  FRONT END", "STATE", "PUSHES", "CONNS", "IN FLIGHT", "HANDOFFS", "RESETS", "TIMEOUTS"));
        for (PrismVipView.Frontend f : v.frontends) {
            b.append(row("  " + f.ip, f.state, f.pushes, f.connections, f.inFlight, f.handoffs, f.clientResets,
                    f.handoffTimeouts));
            if (f.error != null) {
                b.append("    ").append(f.error).append('\n');
            }
        }
        b.append(row("  BACKEND", "ADDRESS", "HOST", "UP AT", "OWNED", "HANDOFFS"));
        for (PrismVipView.Backend k : v.backends) {
            b.append(row("  " + k.name, k.address + ":" + k.controlPort, k.hostHealthy ? "healthy" : "UNHEALTHY",
                    k.upAt + "/" + v.frontends.size(), k.owned, k.handoffs));
        }
        return b.toString();
    }

    /** Each connection and its owner. */
    public static String connections(List<PrismConnectionView> conns) {
        if (conns.isEmpty()) {
            return "no connections\n";
        }
        StringBuilder b = new StringBuilder(row("FRONT END", "ID", "CLIENT", "STATE", "OWNER", "REQUESTS"));
        for (PrismConnectionView c : conns) {
            b.append(row(c.frontend, c.id, c.client, c.state, c.owner, c.requests));
        }
        return b.toString();
    }

    /** Each fabric steering pin: the flow and the backend it goes to. */
    public static String pins(List<PrismPin> pins) {
        if (pins.isEmpty()) {
            return "no pins\n";
        }
        StringBuilder b = new StringBuilder(row("CLIENT", "VIP PORT", "BACKEND", "DIP"));
        for (PrismPin p : pins) {
            b.append(row(p.client + ":" + p.clientPort, p.vipPort, p.backend, p.dip));
        }
        return b.toString();
    }

    private static String row(Object... cells) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            b.append(String.format(Locale.ROOT, i == cells.length - 1 ? "%s" : "%-18s ", cells[i]));
        }
        return b.toString().stripTrailing() + "\n";
    }
}
