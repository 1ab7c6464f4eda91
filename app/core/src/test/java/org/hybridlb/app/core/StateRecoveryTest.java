package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.metrics.Scraped;
import org.hybridlb.app.core.store.FileStateStore;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * An unreadable state file (truncated, empty, garbage, not ours) and a state that cannot be written
 * (a full disk): the controller never starts empty in place of a state it lost, and never wedges.
 */
class StateRecoveryTest {
    static final String TRUNCATED = "{\"format\":1,\"smuxTableVersion\":3,\"desired\":[{\"vip\":\"10.1";
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final List<Controller> started = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        started.forEach(Controller::close);
    }

    Controller controller(org.hybridlb.app.core.port.StateStore store, ControllerMetrics metrics) {
        Controller c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO), fabric.ports(store),
                metrics);
        started.add(c);
        return c;
    }

    String vipJson(String vip, int host) {
        return FakeFabric.vipJson(topo, vip, host);
    }

    /** Two VIPs created one after the other: the file holds both, its last good copy the first only. */
    FileStateStore twoVips() {
        FileStateStore store = new FileStateStore(dir.resolve("state.json"));
        Controller c = controller(store, new ControllerMetrics());
        c.start();
        c.createVip(vipJson("10.100.0.1", 0));
        c.awaitIdle(20_000);
        c.createVip(vipJson("10.100.0.2", 1));
        c.awaitIdle(20_000);
        c.close();
        started.clear();
        return store;
    }

    @ParameterizedTest
    @ValueSource(strings = {TRUNCATED, "", "\u0000\u0017garbage\u00ff", "null", "[]", "{\"vips\":[]}"})
    void anUnreadableFileIsReplacedByItsLastGoodCopyAndSetAside(String damage) throws Exception {
        FileStateStore store = twoVips();
        String copy = Files.readString(store.previousFile());
        Files.writeString(store.file(), damage);
        Controller c = controller(store, new ControllerMetrics());
        c.start();
        c.awaitIdle(20_000);
        List<String> vips = new ArrayList<>();
        c.vips().forEach(v -> vips.add(v.vip));
        assertTrue(!vips.isEmpty(), "never an empty state in place of a lost one");
        assertEquals(Json.read(copy, ControllerState.class).desired.size(), vips.size(), "the copy's VIPs");
        try (var files = Files.list(dir)) {
            List<Path> aside = files.filter(p -> p.getFileName().toString().startsWith("state.json.unreadable-"))
                    .collect(java.util.stream.Collectors.toList());
            assertEquals(1, aside.size(), "the unreadable file is kept for inspection");
            assertEquals(damage, Files.readString(aside.get(0)));
        }
        c.createVip(vipJson("10.100.0.3", 2));
        c.awaitIdle(20_000);
        assertEquals(vips.size() + 1, Json.read(Files.readString(store.file()), ControllerState.class).desired.size(),
                "the file is written again");
    }

    @ParameterizedTest
    @ValueSource(strings = {TRUNCATED, "", "garbage"})
    void withoutAGoodCopyTheStartIsRefusedNamingTheFileAndWhatToDo(String damage) throws Exception {
        FileStateStore store = twoVips();
        Files.writeString(store.previousFile(), "{\"format\":1,\"desi");
        Files.writeString(store.file(), damage);
        fabric.takeLog();
        Controller c = controller(store, new ControllerMetrics());
        StateUnreadableException e = assertThrows(StateUnreadableException.class, c::start);
        assertTrue(e.getMessage().startsWith("state file " + store.file() + " is unreadable ("), e.getMessage());
        assertTrue(e.getMessage().contains("last good copy " + store.previousFile() + ": it is unreadable too"),
                e.getMessage());
        assertTrue(e.getMessage().contains("Restore the state from a backup, or move it away to start empty"),
                e.getMessage());
        assertEquals(damage, Files.readString(store.file()), "the file is left as it was");
        assertEquals(List.of(), fabric.takeLog(),
                "nothing programmed");
    }

    @Test
    void whileTheStateCannotBeWrittenFailoversGoOnMigrationsWaitAndTheApiSaysSo() {
        FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
        ControllerMetrics metrics = new ControllerMetrics();
        Controller c = controller(store, metrics);
        c.start();
        String tor = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().get().id;
        fabric.traffic = new TrafficInterval(0, 0, 10, List.of(new VipTraffic("10.100.0.1", Map.of(tor, 2e8), null)));
        c.createVip(vipJson("10.100.0.1", 0));
        c.awaitIdle(20_000);
        String at = c.assignment().installed.get("10.100.0.1");
        assertNotEquals(Assignment.SMUX, at);
        long migrations = c.migrations().recent.size();

        store.broken = true; // the disk fills up
        String persisted = store.json;
        ApiException refused = assertThrows(ApiException.class, () -> c.createVip(vipJson("10.100.0.2", 1)));
        assertEquals(503, refused.status);
        assertTrue(refused.reason.contains("No space left on device"), refused.reason);
        fabric.takeLog();
        fabric.down.add(at);
        c.switchDown(at);
        c.awaitIdle(20_000);
        assertTrue(fabric.takeLog().contains("withdrawRoutes " + at + " [10.100.0.1]"), "the failover went on");
        AssignmentView a = c.assignment();
        assertEquals(Assignment.SMUX, a.installed.get("10.100.0.1"), "served by the SMuxes meanwhile");
        assertTrue(a.lastError != null && a.lastError.startsWith("cannot write the controller state: ")
                && a.lastError.contains("No space left on device") && a.lastError.contains("no migration starts"),
                String.valueOf(a.lastError));
        assertEquals(migrations, c.migrations().recent.size(), "no migration started");
        assertEquals(null, c.migrations().inFlight);
        assertEquals(persisted, store.json, "nothing half-written");
        assertEquals(List.of("10.100.0.1"), c.vips().stream().map(v -> v.vip).collect(java.util.stream.Collectors.toList()), "the refused VIP is not there");
        Scraped s = Scraped.of(metrics);
        assertEquals(0, s.value("hybridlb_state_writable"));
        assertTrue(s.value("hybridlb_state_write_errors") >= 2);

        store.broken = false; // space freed: the next round writes the state, migrations run again
        c.requestReconcile(Cause.FABRIC_CHANGED, "disk freed");
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError);
        c.createVip(vipJson("10.100.0.2", 1));
        c.awaitIdle(20_000);
        assertTrue(c.assignment().installed.containsKey("10.100.0.2"), "a migration installed the new VIP");
        assertTrue(c.migrations().recent.size() > migrations);
        assertEquals(1, Scraped.of(metrics).value("hybridlb_state_writable"));
    }
}
