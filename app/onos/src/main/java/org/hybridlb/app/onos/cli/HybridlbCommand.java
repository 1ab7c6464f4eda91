package org.hybridlb.app.onos.cli;

import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.onos.HybridlbService;
import org.onosproject.cli.AbstractShellCommand;

/**
 * Base of the hybridlb commands: the controller's API, its answer (a view of
 * {@code org.hybridlb.app.core.view}) printed as text, or with {@code -j} as the JSON of the REST
 * API (the core's encoder); refusals print the field and the reason.
 *
 * @param <T> the type of the answer
 */
public abstract class HybridlbCommand<T> extends AbstractShellCommand {
    /** Set by tests; in ONOS the service comes from the OSGi registry. */
    HybridlbService service;

    protected HybridlbApi api() {
        return hybridlb().api();
    }

    protected HybridlbService hybridlb() {
        return service != null ? service : get(HybridlbService.class);
    }

    @Override
    protected final void doExecute() {
        try {
            T result = call();
            if (outputJson()) {
                print("%s", Json.write(json(result)));
            } else {
                printText(result);
            }
        } catch (ApiException e) {
            error("%s%s", e.field == null ? "" : e.field + ": ", e.reason);
        }
    }

    /** The API call; its result is printed as JSON or as text. */
    protected abstract T call();

    protected abstract void printText(T result);

    /** What {@code -j} prints: the answer as the REST API sends it. */
    protected Object json(T result) {
        return result;
    }

    static String num(Number n) {
        return n == null ? "-" : String.format("%.3g", n.doubleValue());
    }
}
