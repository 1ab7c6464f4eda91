package org.hybridlb.standalone;

import java.util.List;

/** A config or fabric file the daemon refuses; one {@code file: /field: reason} line per problem. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    public ConfigException(List<String> problems) {
        super(String.join("\n", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
