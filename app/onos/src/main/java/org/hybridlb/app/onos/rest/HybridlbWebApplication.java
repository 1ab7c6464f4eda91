package org.hybridlb.app.onos.rest;

import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.onos.HybridlbService;
import org.onlab.osgi.DefaultServiceDirectory;
import org.onlab.osgi.ServiceDirectory;
import org.onlab.osgi.ServiceNotFoundException;

/**
 * The core's REST resources served by ONOS under {@code /onos/hybridlb/} (web.xml names this class
 * to Jersey's servlet): the same resources and JSON as hybridlbd, the metrics at
 * {@code /onos/hybridlb/metrics} and the web view at {@code /onos/hybridlb/ui/}. The app's service is looked up on
 * every request, as ONOS's own resources do ({@code AbstractWebResource.get}): the web bundle may
 * start before the app's component is active, and the component may be restarted under it.
 */
public class HybridlbWebApplication extends HybridlbRestApplication {
    /** The 503 reason while the app's component is not active. */
    public static final String NOT_ACTIVE = "the hybridlb app is not active: its component is waiting for the "
            + "ONOS services it needs (ONOS console: 'apps -a -s', 'scr:list')";

    public HybridlbWebApplication() {
        this(new DefaultServiceDirectory());
    }

    /** Looks the controller up in {@code directory} (ONOS's OSGi registry; tests pass their own). */
    public HybridlbWebApplication(ServiceDirectory directory) {
        super(() -> service(directory).api(), () -> service(directory).metrics(), DEFAULT_MAX_BODY_BYTES);
    }

    private static HybridlbService service(ServiceDirectory directory) {
        HybridlbService service;
        try {
            service = directory.get(HybridlbService.class);
        } catch (ServiceNotFoundException e) {
            service = null;
        }
        if (service == null) {
            throw ApiException.unavailable(NOT_ACTIVE);
        }
        return service;
    }
}
