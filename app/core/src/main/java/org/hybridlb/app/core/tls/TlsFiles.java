package org.hybridlb.app.core.tls;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Collection;
import java.util.Enumeration;
import java.util.function.Supplier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS material of every runtime, read with the JDK alone: an identity (certificate and key) from
 * a PKCS#12 file with its password in a separate file (so that the config can be world-readable and
 * the password not), and the CAs to trust from a PEM file. {@code app/standalone/deploy/hlb-certs}
 * writes both. Every problem is an {@link IllegalArgumentException} whose message names the file.
 */
public final class TlsFiles {
    private TlsFiles() {
    }

    /** The key managers of the identity in {@code keystore} (PKCS#12), its password the first line of {@code passwordFile}. */
    public static KeyManager[] identity(Path keystore, Path passwordFile) {
        char[] password = password(passwordFile);
        KeyStore ks;
        try (InputStream in = Files.newInputStream(keystore)) {
            ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(keystore + ": cannot read the PKCS#12 keystore (wrong password in "
                    + passwordFile + "?): " + e.getMessage(), e);
        }
        try {
            if (!hasKey(ks)) {
                throw new IllegalArgumentException(keystore + ": holds no private key (an identity needs its key and "
                        + "certificate: hlb-certs writes NAME.p12)");
            }
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, password);
            return kmf.getKeyManagers();
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(keystore + ": " + e.getMessage(), e);
        }
    }

    /** Trust managers that accept certificates issued by the CA certificates of {@code caPem} (PEM, one or more). */
    public static TrustManager[] trust(Path caPem) {
        Collection<? extends Certificate> cas;
        try (InputStream in = Files.newInputStream(caPem)) {
            cas = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException | CertificateException e) {
            throw new IllegalArgumentException(caPem + ": cannot read CA certificates (PEM): " + e.getMessage(), e);
        }
        if (cas.isEmpty()) {
            throw new IllegalArgumentException(caPem + ": no certificate in the file");
        }
        try {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (Certificate c : cas) {
                ks.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            return tmf.getTrustManagers();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(caPem + ": " + e.getMessage(), e);
        }
    }

    /** A TLS context from optional key and trust managers (null: none / the JDK's default CAs). */
    public static SSLContext context(KeyManager[] keys, TrustManager[] trust) {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(keys, trust, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no TLS: " + e.getMessage(), e);
        }
    }

    /**
     * The HTTP/1.1 client of the management plane (SMux control APIs, host agents): plain when
     * {@code tls} is null, else TLS with that context for {@code https://} URLs.
     */
    public static HttpClient client(SSLContext tls, Duration connectTimeout) {
        HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(connectTimeout).version(HttpClient.Version.HTTP_1_1);
        if (tls != null) {
            b.sslContext(tls);
        }
        return b.build();
    }

    /** A plain-HTTP client (no TLS settings), as the clients' supplier. */
    public static Supplier<HttpClient> plain(Duration connectTimeout) {
        HttpClient c = client(null, connectTimeout);
        return () -> c;
    }

    /**
     * A client that follows {@code tls} (asked on every call; null: plain), rebuilt only when the
     * context changes: the ONOS app's TLS files come from its network configuration.
     */
    public static Supplier<HttpClient> following(Supplier<SSLContext> tls, Duration connectTimeout) {
        return new Supplier<>() {
            private SSLContext last;
            private HttpClient client;

            @Override
            public synchronized HttpClient get() {
                SSLContext now = tls.get();
                if (client == null || now != last) {
                    last = now;
                    client = client(now, connectTimeout);
                }
                return client;
            }
        };
    }

    private static char[] password(Path passwordFile) {
        try {
            String s = Files.readString(passwordFile, StandardCharsets.UTF_8);
            int nl = s.indexOf('\n');
            return (nl >= 0 ? s.substring(0, nl) : s).strip().toCharArray();
        } catch (IOException e) {
            throw new IllegalArgumentException(passwordFile + ": cannot read the keystore password: " + e, e);
        }
    }

    private static boolean hasKey(KeyStore ks) throws GeneralSecurityException {
        for (Enumeration<String> a = ks.aliases(); a.hasMoreElements(); ) {
            if (ks.isKeyEntry(a.nextElement())) {
                return true;
            }
        }
        return false;
    }
}
