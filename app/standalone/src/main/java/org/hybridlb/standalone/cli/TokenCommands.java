package org.hybridlb.standalone.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.hybridlb.standalone.api.Tokens;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code hybridlb token create|revoke}: edits hybridlbd's token file on this machine (it needs no
 * daemon; the daemon re-reads the file within a second). The token is printed once and stored only
 * as its SHA-256.
 */
final class TokenCommands {
    private TokenCommands() {
    }

    @Command(name = "token", description = "Create or revoke an API token in hybridlbd's token file.",
            subcommands = {Create.class, Revoke.class})
    static final class TokenCmd extends HybridlbCli.Group {
    }

    abstract static class Edit implements Callable<Integer> {
        @ParentCommand
        TokenCmd parent;

        @Option(names = "--tokens", required = true, description = "the token file (the 'tokens' of hybridlbd's config)")
        Path file;

        @Option(names = "--name", required = true, description = "who or what holds the token (unique in the file)")
        String name;

        @Override
        public Integer call() {
            try {
                return edit();
            } catch (IllegalArgumentException e) {
                parent.cli.err.println("hybridlb: " + e.getMessage());
                parent.cli.err.flush();
                return 1;
            }
        }

        abstract int edit();
    }

    @Command(name = "create", description = "Add a token and print it (once: only its hash is kept).")
    static final class Create extends Edit {
        @Option(names = "--role", required = true, description = "viewer (may read) or admin (may also write)",
                converter = RoleConverter.class)
        Tokens.Role role;

        @Override
        int edit() {
            String token = Tokens.create(file, name, role);
            parent.cli.out.println(token);
            parent.cli.out.flush();
            return 0;
        }
    }

    @Command(name = "revoke", description = "Remove a token by name.")
    static final class Revoke extends Edit {
        @Override
        int edit() {
            if (!Tokens.revoke(file, name)) {
                throw new IllegalArgumentException(file + ": no token named \"" + name + "\"");
            }
            parent.cli.out.println("revoked " + name);
            parent.cli.out.flush();
            return 0;
        }
    }

    static final class RoleConverter implements CommandLine.ITypeConverter<Tokens.Role> {
        @Override
        public Tokens.Role convert(String s) {
            for (Tokens.Role r : Tokens.Role.values()) {
                if (r.json().equals(s)) {
                    return r;
                }
            }
            throw new CommandLine.TypeConversionException("must be viewer or admin, got '" + s + "'");
        }
    }
}
