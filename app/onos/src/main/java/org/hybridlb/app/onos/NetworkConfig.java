package org.hybridlb.app.onos;

import java.util.function.Consumer;
import java.util.function.Supplier;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Controller;
import org.hybridlb.app.onos.fabric.FabricTracker;
import org.hybridlb.app.onos.fabric.FabricView;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.InvalidFieldException;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.device.DeviceService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The app's network configuration (netcfg {@code apps/org.hybridlb.app/hybridlb}): the one in
 * force, and each new one checked (its own fields, then that every configured device exists)
 * and applied through the controller, which plans the migration. A refused one changes nothing and
 * is reported ({@link #lastError}). Runs on the app's event thread ({@link EventHandoff}).
 */
final class NetworkConfig {
    private static final Logger log = LoggerFactory.getLogger(NetworkConfig.class);

    private final DeviceService devices;
    private final Supplier<FabricTracker> fabric;
    private final Supplier<Controller> controller;
    private final Consumer<String> reconcile;
    private volatile HybridlbConfig config;
    private volatile String lastError;

    NetworkConfig(DeviceService devices, Supplier<FabricTracker> fabric, Supplier<Controller> controller,
                  Consumer<String> reconcile) {
        this.devices = devices;
        this.fabric = fabric;
        this.controller = controller;
        this.reconcile = reconcile;
    }

    /** The configuration in force, or null. */
    HybridlbConfig get() {
        return config;
    }

    /** Why the last configuration was refused, or null. */
    String lastError() {
        return lastError;
    }

    /** The configuration found at activation, if it is valid (the fabric is not built yet). */
    void initial(HybridlbConfig c) {
        if (c != null && accept(c) == null) {
            config = c;
        }
    }

    /** Checks a configuration: its own fields, then that every configured device exists. Null: fine. */
    String accept(HybridlbConfig c) {
        try {
            c.isValid();
        } catch (InvalidFieldException e) {
            return "invalid hybridlb config: field " + e.field() + ": " + e.reason();
        } catch (RuntimeException e) {
            return "invalid hybridlb config: " + e.getMessage();
        }
        for (DeviceId d : c.devices().keySet()) {
            if (devices.getDevice(d) == null) {
                return "invalid hybridlb config: field /switches/" + d + ": unknown device";
            }
        }
        return null;
    }

    void event(NetworkConfigEvent event) {
        switch (event.type()) {
            case CONFIG_ADDED:
            case CONFIG_UPDATED:
                event.config().ifPresent(c -> changed((HybridlbConfig) c));
                break;
            case CONFIG_REMOVED:
                config = null;
                fabric.get().rebuild();
                reconcile.accept("network configuration removed");
                break;
            default:
                break;
        }
    }

    /** A new configuration: validated, then applied through the controller (which plans the migration). */
    void changed(HybridlbConfig c) {
        String error = accept(c);
        if (error != null) {
            refuse(error);
            return;
        }
        HybridlbConfig previous = config;
        FabricView previousFabric = fabric.get().view();
        config = c;
        fabric.get().rebuild();
        if (c.hasVips() && controller.get() != null && !applyVips(controller.get())) {
            config = previous;
            fabric.get().restore(previousFabric);
            return;
        }
        lastError = null;
        reconcile.accept("network configuration changed");
    }

    /** The configuration's VIPs to {@code c} (the leader's controller); false, with the reason recorded, when refused. */
    boolean applyVips(Controller c) {
        HybridlbConfig now = config;
        if (now == null || !now.hasVips()) {
            return true;
        }
        try {
            c.replaceVips(now.vipsBody());
            return true;
        } catch (ApiException e) {
            refuse("invalid hybridlb config: field /vips" + (e.field == null || "/".equals(e.field) ? "" : e.field)
                    + ": " + e.reason);
            return false;
        } catch (InvalidFieldException e) {
            refuse("invalid hybridlb config: field " + e.field() + ": " + e.reason());
            return false;
        }
    }

    private void refuse(String error) {
        lastError = error;
        log.error("{}; configuration not applied, the previous one stays", error);
    }
}
