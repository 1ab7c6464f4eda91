package org.hybridlb.app.onos.p4;

import java.util.ArrayList;
import java.util.List;
import org.onosproject.net.pi.model.DefaultPiPipeconf;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.model.PiPipeconfId;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.net.pi.model.PiPipelineModel;
import org.onosproject.net.pi.service.PiPipeconfService;
import org.onosproject.p4runtime.model.P4InfoParser;
import org.onosproject.p4runtime.model.P4InfoParserException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the hybridlb pipeconfs and registers them with ONOS when the app starts (removes them when it
 * stops). A pipeconf: the pipeline model parsed by ONOS's own P4Info parser from the committed P4Info,
 * the interpreter, and the P4Info text (what ONOS's P4Runtime driver sends with
 * SetForwardingPipelineConfig). No device binary (BMv2 JSON, Tofino): no P4 compiler is packaged for
 * this repository's build; a real target keeps the pipeline it runs, or the operator adds its binary.
 *
 * <p>A component of its own, so the rest of the app never depends on it: without a
 * {@link PiPipeconfService} it waits unsatisfied; without ONOS's P4Runtime bundles (the parser; the
 * bundle imports it optionally) it logs what to activate and registers nothing.
 */
@Component(immediate = true)
public class HlbPipeconfLoader {
    private static final Logger log = LoggerFactory.getLogger(HlbPipeconfLoader.class);

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected PiPipeconfService pipeconfService;

    private final List<PiPipeconfId> registered = new ArrayList<>();

    @Activate
    protected void activate() {
        for (String profile : HlbPipeconfs.PROFILES) {
            PiPipeconfId id = HlbPipeconfs.id(profile);
            if (pipeconfService.getPipeconf(id).isPresent()) {
                log.warn("pipeconf {} is registered already (another copy of the app?): left as it is", id);
                continue;
            }
            PiPipeconf p;
            try {
                p = pipeconf(profile);
            } catch (NoClassDefFoundError e) {
                log.error("no hybridlb pipeconfs: ONOS's P4Runtime bundles are missing ({}); activate"
                        + " org.onosproject.drivers.p4runtime before this app", e.getMessage());
                return;
            }
            pipeconfService.register(p);
            registered.add(id);
        }
        log.info("pipeconfs registered: {}", registered);
    }

    @Deactivate
    protected void deactivate() {
        for (PiPipeconfId id : registered) {
            try {
                pipeconfService.unregister(id);
            } catch (IllegalStateException e) {
                log.warn("unregistering pipeconf {}: {}", id, e.getMessage());
            }
        }
        registered.clear();
    }

    /** The pipeline model of {@code profile}, parsed by ONOS's P4Info parser. */
    public static PiPipelineModel model(String profile) {
        try {
            return P4InfoParser.parse(HlbPipeconfs.p4Info(profile));
        } catch (P4InfoParserException e) {
            throw new IllegalStateException("P4Info of " + profile + ": " + e.getMessage(), e);
        }
    }

    /** The pipeconf of {@code profile}. */
    public static PiPipeconf pipeconf(String profile) {
        return DefaultPiPipeconf.builder()
                .withId(HlbPipeconfs.id(profile))
                .withPipelineModel(model(profile))
                .addBehaviour(PiPipelineInterpreter.class, HlbInterpreter.class)
                .addExtension(PiPipeconf.ExtensionType.P4_INFO_TEXT, HlbPipeconfs.p4Info(profile))
                .build();
    }
}
