package org.hybridlb.app.core.prism;

import java.util.List;
import org.hybridlb.app.core.port.SouthboundException;

/**
 * The fabric side of Prism's fabric steering: where a {@link PrismPin} is installed (an exact-match
 * rule on the HMux holding the VIP, or a pin on its SMuxes). Every call returns once the devices
 * acknowledged it, or throws {@link SouthboundException}; the pin is then in force (put) or gone
 * (remove) on every device that carries the VIP's traffic.
 */
public interface FabricPins {
    /** Installs {@code pin}, replacing any pin of the same flow. */
    void put(PrismPin pin);

    /** Removes the pin of {@code pin}'s flow (nothing when there is none). */
    void remove(PrismPin pin);

    /** The pins the devices hold now (read back: after a controller restart they are adopted or removed). */
    List<PrismPin> installed();

    /** A controller without a renderer for pins: a fabric-steered VIP is refused (see {@link #available}). */
    FabricPins NONE = new FabricPins() {
        @Override
        public void put(PrismPin pin) {
            throw new SouthboundException(WHY_NONE);
        }

        @Override
        public void remove(PrismPin pin) {
            throw new SouthboundException(WHY_NONE);
        }

        @Override
        public List<PrismPin> installed() {
            return List.of();
        }

        @Override
        public boolean available() {
            return false;
        }
    };

    /** Why {@link #NONE} refuses. */
    String WHY_NONE = "this controller has no fabric pin renderer (steering: fabric needs one; use steering: agent)";

    /** Whether pins can be installed at all. */
    default boolean available() {
        return true;
    }
}
