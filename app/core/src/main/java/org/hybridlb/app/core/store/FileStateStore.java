package org.hybridlb.app.core.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.hybridlb.app.core.port.StateStore;

/**
 * The daemon's state store: one JSON file replaced by write-to-temp, fsync, atomic rename and
 * fsync of the directory, so a crash at any point leaves the old or the new file.
 */
public final class FileStateStore implements StateStore {
    private final Path file;

    public FileStateStore(Path file) {
        this.file = file.toAbsolutePath();
    }

    public Path file() {
        return file;
    }

    @Override
    public Optional<String> load() {
        try {
            return Optional.of(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read state file " + file, e);
        }
    }

    @Override
    public void save(String json) {
        Path dir = file.getParent();
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try {
            Files.createDirectories(dir);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(json.getBytes(StandardCharsets.UTF_8));
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + dir + " cannot rename atomically", e);
            }
            syncDirectory(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write state file " + file, e);
        }
    }

    /** Makes the rename durable; some platforms cannot open a directory, and then rename is all we get. */
    private static void syncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // not supported here (e.g. Windows); the rename itself is still atomic
        }
    }
}
