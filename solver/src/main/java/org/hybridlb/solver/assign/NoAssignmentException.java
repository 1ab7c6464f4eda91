package org.hybridlb.solver.assign;

/**
 * No assignment meets what was asked (for example a migration budget that every assignment the
 * solver can find breaks). The CLI reports the message and exits with its own code, so that a
 * script can tell it from bad input.
 */
public final class NoAssignmentException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NoAssignmentException(String message) {
        super(message);
    }
}
