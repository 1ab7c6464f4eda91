package org.hybridlb.standalone.api;

import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.ws.rs.core.Application;
import org.glassfish.jersey.CommonProperties;
import org.glassfish.jersey.jdkhttp.JdkHttpHandlerContainer;
import org.glassfish.jersey.server.ContainerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;

/**
 * hybridlbd's HTTP(S) server: the JDK's server (HTTPS when given a TLS context) with the REST API
 * (Jersey) at {@code /} and whatever else the daemon serves added with {@link #serve}; every path
 * goes through the same {@link ApiGate} (tokens, body size, requests in progress). The socket is
 * bound at construction, requests are answered once {@link #start} ran.
 */
public final class ApiServer implements AutoCloseable {
    /** How the server listens and whom it serves. */
    public static final class Settings {
        public final InetSocketAddress listen;
        /** Null: plain HTTP. */
        public final SSLContext tls;
        /** Null: no authentication (loopback only, enforced by the daemon's config). */
        public final Tokens tokens;
        public final long maxBodyBytes;
        public final int maxConcurrentRequests;

        public Settings(InetSocketAddress listen, SSLContext tls, Tokens tokens, long maxBodyBytes,
                        int maxConcurrentRequests) {
            this.listen = listen;
            this.tls = tls;
            this.tokens = tokens;
            this.maxBodyBytes = maxBodyBytes;
            this.maxConcurrentRequests = maxConcurrentRequests;
        }
    }

    /** Threads beyond the requests in progress: they answer the 503s while every permit is out. */
    static final int SPARE_THREADS = 4;

    static {
        // a client that sends its request line and headers slower than this is dropped (slowloris)
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
            System.setProperty("sun.net.httpserver.maxReqTime", "30");
        }
    }

    private final Settings settings;
    private final HttpServer server;
    private final ApiGate gate;
    private final ExecutorService executor;
    private final JdkHttpHandlerContainer jersey;

    public ApiServer(Settings settings, Application api) {
        this.settings = settings;
        this.gate = new ApiGate(settings.tokens, settings.maxBodyBytes, settings.maxConcurrentRequests);
        try {
            if (settings.tls != null) {
                HttpsServer s = HttpsServer.create(settings.listen, 0);
                s.setHttpsConfigurator(new HttpsConfigurator(settings.tls));
                server = s;
            } else {
                server = HttpServer.create(settings.listen, 0);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + settings.listen, e);
        }
        int threads = settings.maxConcurrentRequests + SPARE_THREADS;
        AtomicInteger n = new AtomicInteger();
        executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "hybridlbd-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        ResourceConfig rc = ResourceConfig.forApplication(api);
        // nothing to discover: the core's resources encode their own JSON (faster start, no warnings)
        rc.property(ServerProperties.WADL_FEATURE_DISABLE, true);
        rc.property(CommonProperties.FEATURE_AUTO_DISCOVERY_DISABLE, true);
        rc.property(CommonProperties.METAINF_SERVICES_LOOKUP_DISABLE, true);
        jersey = ContainerFactory.createContainer(JdkHttpHandlerContainer.class, rc);
        serve("/", jersey);
    }

    /** Serves {@code handler} under {@code path}, behind the same gate as the REST API. */
    public void serve(String path, HttpHandler handler) {
        HttpContext c = server.createContext(path, handler);
        c.getFilters().add(gate);
    }

    public ApiServer start() {
        server.start();
        return this;
    }

    /** The base URL (with the port actually bound). */
    public String url() {
        return (settings.tls != null ? "https://" : "http://") + settings.listen.getHostString() + ":"
                + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        jersey.getApplicationHandler().onShutdown(jersey);
    }
}
