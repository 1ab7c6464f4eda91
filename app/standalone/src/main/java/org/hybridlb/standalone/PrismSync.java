package org.hybridlb.standalone;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import org.hybridlb.app.core.prism.HttpPrismFrontEnds;
import org.hybridlb.app.core.prism.PrismHandoff;
import org.hybridlb.app.core.prism.PrismText;
import org.hybridlb.app.core.prism.PrismVipView;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Vip;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hybridlb-prism-sync --vips FILE}: the daemon's Prism hand-off controller on its own, for a
 * lab or a Prism experiment without a fabric: validates the VIP file as the daemon does, pushes each
 * Prism VIP's rules to its front ends (and again after a front end restarts), prints their state.
 * Exit 0 when every front end runs its VIP's rules, 1 when one does not, 2 for a bad VIP file. With
 * {@code --ca} (and {@code --client-cert}) it talks HTTPS with mutual TLS, as the daemon's client.
 */
@Command(name = "hybridlb-prism-sync", mixinStandardHelpOptions = true,
        description = "Pushes the Prism VIPs' rules of a VIP file to their front ends and prints their state.")
public final class PrismSync implements Callable<Integer> {
    @Option(names = "--vips", required = true, description = "VIP file (the VIP schema, with prism objects)")
    Path vips;

    @Option(names = "--watch", description = "keep them in line every 2 s until stopped (default: one round)")
    boolean watch;

    @Option(names = "--ca", description = "CA (PEM) of the front ends' certificates, for https:// admin URLs")
    Path ca;

    @Option(names = "--client-cert", description = "this client's identity (PKCS#12, hlb-certs DIR controller NAME"
            + " writes NAME.p12): the front ends take PUT /rules only from a client certificate of their --tls-ca")
    Path clientCert;

    @Option(names = "--client-cert-pass", description = "its password file (default: the keystore's name + .pass)")
    Path clientCertPass;

    public static void main(String[] args) {
        Logs.setUp();
        System.exit(new CommandLine(new PrismSync()).execute(args));
    }

    @Override
    public Integer call() throws InterruptedException {
        List<Vip> all;
        try {
            all = ModelIo.readVips(vips).vips;
        } catch (InvalidInputException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        HttpClient http;
        try {
            http = TlsFiles.client(tls(), Duration.ofSeconds(5));
        } catch (IllegalArgumentException e) {
            System.err.println("hybridlb-prism-sync: " + e.getMessage());
            return 2;
        }
        try (PrismHandoff prism = new PrismHandoff(new HttpPrismFrontEnds(Duration.ofSeconds(5), () -> http),
                () -> all, Set::of, Clock.systemUTC())) {
            do {
                prism.round();
                System.out.print(PrismText.vips(prism.views()));
                System.out.flush();
                if (watch) {
                    Thread.sleep(PrismHandoff.PERIOD.toMillis());
                }
            } while (watch);
            boolean inSync = prism.views().stream().flatMap(v -> v.frontends.stream())
                    .allMatch(f -> PrismVipView.Frontend.IN_SYNC.equals(f.state));
            return inSync ? 0 : 1;
        }
    }

    /** The client's TLS: null for plain HTTP (no --ca). */
    private SSLContext tls() {
        if (ca == null) {
            if (clientCert != null) {
                throw new IllegalArgumentException("--client-cert needs --ca");
            }
            return null;
        }
        KeyManager[] keys = clientCert == null ? null : TlsFiles.identity(clientCert,
                clientCertPass != null ? clientCertPass : Path.of(clientCert + ".pass"));
        return TlsFiles.context(keys, TlsFiles.trust(ca));
    }
}
