package org.hybridlb.solver.io;

/**
 * Input that hybridlb refuses: names the source (file or request), the field (a JSON pointer
 * such as {@code /vips/3/ports/0/dips/2/ip}) and the reason.
 */
public final class InvalidInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final String field;
    private final String reason;

    public InvalidInputException(String source, String field, String reason) {
        super(source + ": " + (field == null || field.isEmpty() ? "(document)" : field) + ": " + reason);
        this.source = source;
        this.field = field;
        this.reason = reason;
    }

    public String source() {
        return source;
    }

    public String field() {
        return field;
    }

    public String reason() {
        return reason;
    }
}
