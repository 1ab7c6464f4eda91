package org.hybridlb.solver.cli;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
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

    /**
     * Throws IllegalArgumentException (exit 2) naming the option when {@code file} cannot be
     * written: it is a directory, or the directory it would go in (created if missing) cannot be.
     * Commands call it before they compute, so a typo does not cost a long solve.
     */
    static void checkWritable(Path file, String option) {
        Path target = file.toAbsolutePath();
        if (Files.isDirectory(target)) {
            throw new IllegalArgumentException(option + ": " + file + " is a directory; give a file name");
        }
        Path dir = target.getParent();
        while (dir != null && !Files.exists(dir)) {
            dir = dir.getParent(); // missing directories are created by write
        }
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(option + ": cannot write " + file + ": " + dir + " is not a directory");
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalArgumentException(option + ": cannot write " + file + ": directory " + dir
                    + " is not writable");
        }
    }

    /** {@code pretty = false} writes compact JSON (large traffic traces shrink by half). */
    static void write(Path file, Object value, boolean pretty, String option) {
        checkWritable(file, option);
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
            throw new IllegalArgumentException(option + ": cannot write " + file + ": " + reason(e));
        }
    }

    /** Why, without the temporary file's name ("/.tmp.32428.tmp -> /tmp: Is a directory"). */
    private static String reason(IOException e) {
        if (e instanceof FileSystemException && ((FileSystemException) e).getReason() != null) {
            return ((FileSystemException) e).getReason();
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e instanceof FileSystemException ? e.getClass().getSimpleName() : e.getMessage();
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
