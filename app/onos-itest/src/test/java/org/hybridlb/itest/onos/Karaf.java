package org.hybridlb.itest.onos;

import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.util.tracker.ServiceTracker;

/** What the test asks the running container: bundles, SCR components, services, web contexts, commands. */
final class Karaf {
    private static final long TIMEOUT_MILLIS = 60_000;
    private final BundleContext context;

    Karaf(BundleContext context) {
        this.context = context;
    }

    Bundle bundle(String symbolicName) {
        return Arrays.stream(context.getBundles()).filter(b -> symbolicName.equals(b.getSymbolicName()))
                .findFirst().orElseThrow(() -> new AssertionError("no bundle " + symbolicName));
    }

    <T> T service(Class<T> type) throws InterruptedException {
        return type.cast(await("(objectClass=" + type.getName() + ")"));
    }

    private Object await(String filter) throws InterruptedException {
        try {
            Filter f = context.createFilter(filter);
            ServiceTracker<Object, Object> tracker = new ServiceTracker<>(context, f, null);
            tracker.open(true);
            try {
                return tracker.waitForService(TIMEOUT_MILLIS);
            } finally {
                tracker.close();
            }
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * Whether pax-web started the web context of a web bundle: it registers its ServletContext
     * once the context and its load-on-startup servlets are up (OSGi Web Applications spec); a
     * scanner or servlet failure leaves none.
     */
    boolean webContextStarted(String symbolicName, String path) throws InterruptedException {
        return await("(&(objectClass=javax.servlet.ServletContext)(osgi.web.symbolicname=" + symbolicName
                + ")(osgi.web.contextpath=" + path + "))") != null;
    }

    ComponentConfigurationDTO component(Bundle bundle, String name) throws InterruptedException {
        ServiceComponentRuntime scr = service(ServiceComponentRuntime.class);
        assertNotNull("Felix SCR", scr);
        ComponentDescriptionDTO description = scr.getComponentDescriptionDTO(bundle, name);
        assertNotNull("component " + name + " in " + bundle.getSymbolicName(), description);
        return scr.getComponentConfigurationDTOs(description).stream().findFirst()
                .orElseThrow(() -> new AssertionError("component " + name + " has no configuration"));
    }

    void awaitComponent(Bundle bundle, String name, int state) throws InterruptedException {
        long end = System.currentTimeMillis() + TIMEOUT_MILLIS;
        ComponentConfigurationDTO c = component(bundle, name);
        while (c.state != state && System.currentTimeMillis() < end) {
            Thread.sleep(100);
            c = component(bundle, name);
        }
        if (c.state != state) {
            fail("component " + name + " is in state " + c.state + ", not " + state + "; unsatisfied: " + unsatisfied(c));
        }
    }

    String unsatisfied(ComponentConfigurationDTO c) {
        return Arrays.stream(c.unsatisfiedReferences).map(r -> r.name).collect(Collectors.joining(","));
    }

    /** Runs a command in a Karaf shell session; returns what it printed. */
    String execute(String command) throws Exception {
        SessionFactory sessions = service(SessionFactory.class);
        assertNotNull("Karaf shell", sessions);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        Session session = sessions.create(new ByteArrayInputStream(new byte[0]), out, out);
        try {
            session.execute(command);
        } finally {
            out.flush();
            session.close();
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
