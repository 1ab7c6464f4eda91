package org.hybridlb.app.onos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.onos.HybridlbService;
import org.onosproject.cli.AbstractShellCommand;

/**
 * Base of the hybridlb commands: the controller's API, {@code -j} prints the same JSON as the REST
 * API (the core's encoder), refusals print the field and the reason.
 */
public abstract class HybridlbCommand extends AbstractShellCommand {
    /** Set by tests; in ONOS the service comes from the OSGi registry. */
    HybridlbService service;

    protected HybridlbApi api() {
        return (service != null ? service : get(HybridlbService.class)).api();
    }

    protected HybridlbService hybridlb() {
        return service != null ? service : get(HybridlbService.class);
    }

    @Override
    protected final void doExecute() {
        try {
            Object result = call();
            JsonNode tree = Json.MAPPER.valueToTree(result);
            if (outputJson()) {
                print("%s", Json.write(result));
            } else {
                printText(tree);
            }
        } catch (ApiException e) {
            error("%s%s", e.field == null ? "" : e.field + ": ", e.reason);
        }
    }

    /** The API call; its result is printed as JSON or as text. */
    protected abstract Object call();

    protected abstract void printText(JsonNode result);

    static String num(JsonNode n) {
        return n == null || n.isNull() ? "-" : String.format("%.3g", n.asDouble());
    }
}
