package org.hybridlb.itest.onos;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** GET requests to the app's web context on the container's HTTP port (pax-web's Jetty). */
final class Http {
    /** Karaf's default user (etc/users.properties): roles admin and viewer, as ONOS's web.xml asks. */
    private static final String CREDENTIALS = "karaf:karaf";
    private final int port;
    private final String context;

    Http(int port, String context) {
        this.port = port;
        this.context = context;
    }

    static final class Reply {
        final int status;
        final String body;
        final String path;

        Reply(String path, int status, String body) {
            this.path = path;
            this.status = status;
            this.body = body;
        }

        @Override
        public String toString() {
            return "GET " + path + " -> " + status + " " + body;
        }
    }

    Reply get(String path, boolean authenticated) throws IOException {
        String full = context + path;
        HttpURLConnection c = (HttpURLConnection) new URL("http", "127.0.0.1", port, full).openConnection();
        c.setConnectTimeout(5000);
        c.setReadTimeout(30000);
        if (authenticated) {
            c.setRequestProperty("Authorization", "Basic "
                    + Base64.getEncoder().encodeToString(CREDENTIALS.getBytes(StandardCharsets.UTF_8)));
        }
        try {
            int status = c.getResponseCode();
            InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
            String body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return new Reply(full, status, body);
        } finally {
            c.disconnect();
        }
    }
}
