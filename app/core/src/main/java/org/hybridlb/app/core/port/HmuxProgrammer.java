package org.hybridlb.app.core.port;

import java.util.Collection;
import java.util.Map;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;

/**
 * The fabric switches as HMuxes (package {@code org.hybridlb.app.core.hmux}): the core decides what
 * each switch holds (its {@code SwitchIntent}) and hands over deltas; the southbound renders them
 * into device operations and sends them, reads switches back into readings, and says what each
 * switch can do. It decides no layout.
 */
public interface HmuxProgrammer {
    /** What {@code switchId} can do as an HMux and how the SMuxes must hash to agree with it. */
    SwitchCapability capability(String switchId);

    /**
     * What each switch holds now, read from the devices (in parallel where they allow it). A switch
     * that cannot be read gets a failed reading naming why; it never reads as empty.
     */
    Map<String, SwitchReading> read(Collection<String> switchIds);

    /**
     * Applies each switch's delta, atomically per switch (a bundle, a batch) where the device
     * allows it, the switches in parallel. Throws a {@link SouthboundException} naming every switch
     * that refused or could not be reached, once the others are done.
     */
    void apply(Map<String, SwitchDelta> deltas);
}
