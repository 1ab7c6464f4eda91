package org.hybridlb.app.core;

/**
 * The persisted controller state cannot be read and there is no good copy to take instead. The
 * message names the store and what the operator can do; the controller does not start (an empty
 * state would forget every VIP and clear the switches of what it had installed).
 */
public final class StateUnreadableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StateUnreadableException(String message) {
        super(message);
    }
}
