package org.hybridlb.app.core.port;

/** A southbound call failed (device unreachable, rejected, timed out). The controller rolls back. */
public class SouthboundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SouthboundException(String message) {
        super(message);
    }

    public SouthboundException(String message, Throwable cause) {
        super(message, cause);
    }
}
