package org.hybridlb.app.onos.rest;

import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.onos.HybridlbService;
import org.onlab.osgi.DefaultServiceDirectory;
import org.onlab.osgi.ServiceDirectory;

/**
 * The core's REST resources served by ONOS under {@code /onos/hybridlb/} (web.xml names this class
 * to Jersey's servlet): the same resources and JSON as hybridlbd, bound to the app's controller.
 */
public class HybridlbWebApplication extends HybridlbRestApplication {
    public HybridlbWebApplication() {
        this(new DefaultServiceDirectory());
    }

    /** Looks the controller up in {@code directory} (ONOS's OSGi registry; tests pass their own). */
    public HybridlbWebApplication(ServiceDirectory directory) {
        super(directory.get(HybridlbService.class).api());
    }
}
