package org.hybridlb.solver.cli;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.hybridlb.solver.io.ModelIo;

/**
 * Writes a model object as JSON to a file (or stdout), all or nothing: the file appears
 * complete or not at all, so a failed run leaves no partial result behind.
 */
final class JsonOutput {
    private JsonOutput() {
    }

    /** {@code pretty = false} writes compact JSON (large traffic traces shrink by half). */
    static void write(Path file, Object value, boolean pretty, String option) {
        ObjectWriter writer = pretty ? ModelIo.MAPPER.writer()
                : ModelIo.MAPPER.writer().without(SerializationFeature.INDENT_OUTPUT);
        Path target = file.toAbsolutePath();
        Path tmp = null;
        try {
            Files.createDirectories(target.getParent());
            // a sibling, so the final move is atomic; created normally so the umask applies
            // (Files.createTempFile would leave the result readable by its owner only)
            tmp = target.resolveSibling("." + target.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
            try (OutputStream out = Files.newOutputStream(tmp)) {
                writer.writeValue(out, value);
            }
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw new IllegalArgumentException(option + ": cannot write " + file + ": " + e.getMessage());
        }
    }

    static void print(PrintWriter out, Object value) {
        out.println(ModelIo.toJson(value));
        out.flush();
    }

    private static void deleteQuietly(Path tmp) {
        if (tmp != null) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // best effort: the temporary file is hidden and named after the target
            }
        }
    }
}
