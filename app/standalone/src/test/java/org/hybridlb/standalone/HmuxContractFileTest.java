package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.standalone.ovs.OvsRules;
import org.junit.jupiter.api.Test;

/**
 * The HMux layout as the emulation's scripts and tests read it ({@code topologies/hmux-layout.json},
 * read by {@code topologies/hmux_layout.py}): written from the Java constants (the core's
 * {@link HmuxLayout}, the OVS spelling in {@link OvsRules}, the daemon's fabric.json defaults), never
 * typed twice. Fails when the checked-in file is stale; {@code -Dhmux.layout.write=true} rewrites it.
 */
class HmuxContractFileTest {
    static final Path FILE = Path.of(System.getProperty("user.dir")).resolve("../../topologies/hmux-layout.json")
            .normalize();

    static String contract() throws IOException {
        ObjectNode root = DaemonConfig.STRICT.createObjectNode();
        root.put("generatedBy", "app/standalone HmuxContractFileTest from HmuxLayout, OvsRules and Fabric; do not edit: "
                + "mvn -pl app/standalone -am test -Dtest=HmuxContractFileTest -Dhmux.layout.write=true "
                + "-Dsurefire.failIfNoSpecifiedTests=false");
        ObjectNode p = root.putObject("priorities");
        p.put("entryWholeVip", HmuxLayout.PRIORITY_ENTRY_WHOLE_VIP);
        p.put("entryProtocol", HmuxLayout.PRIORITY_ENTRY_PROTOCOL);
        p.put("entryPort", HmuxLayout.PRIORITY_ENTRY_PORT);
        p.put("route", HmuxLayout.PRIORITY_ROUTE);
        p.put("aggregate", HmuxLayout.PRIORITY_AGGREGATE);
        ObjectNode c = root.putObject("cookie");
        ObjectNode kinds = c.putObject("kinds");
        for (HmuxLayout.Kind k : HmuxLayout.Kind.values()) {
            kinds.put(k.name().toLowerCase(java.util.Locale.ROOT), k.code);
        }
        c.put("kindMask", HmuxLayout.KIND_MASK);
        c.put("dataShift", HmuxLayout.DATA_SHIFT);
        ObjectNode o = root.putObject("ovs");
        o.put("controllerCookie", Fabric.DEFAULT_CONTROLLER_COOKIE);
        o.put("controllerGroupIdBase", Fabric.DEFAULT_GROUP_ID_BASE);
        o.put("selectMethod", OvsRules.HASH);
        o.put("failoverGroupBase", OvsRules.FAILOVER_GROUP_BASE);
        o.put("fallbackGroup", OvsRules.FALLBACK_GROUP);
        HashContract h = org.hybridlb.standalone.ovs.OvsHmuxSouthbound.CONTRACT;
        o.put("smuxSelection", h.selection.smuxName);
        o.put("smuxEncap", h.encap.smuxName());
        return DaemonConfig.STRICT.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    }

    @Test
    void theCheckedInLayoutIsWhatTheCodeSays() throws IOException {
        String want = contract();
        if (Boolean.getBoolean("hmux.layout.write")) {
            Files.writeString(FILE, want);
        }
        assertEquals(want, Files.readString(FILE), FILE + " is stale: regenerate it with -Dhmux.layout.write=true");
    }
}
