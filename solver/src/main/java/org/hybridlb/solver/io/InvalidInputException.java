package org.hybridlb.solver.io;

import com.fasterxml.jackson.core.JsonPointer;

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

    /**
     * The field {@code key} of the object at {@code parent} as a JSON pointer: the key is one
     * token whatever it holds ({@code /dips/10.9.1.1}, with "~" and "/" escaped as RFC 6901 says).
     */
    public static String key(String parent, String key) {
        return parent + JsonPointer.empty().appendProperty(key);
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
