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
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.Set;
import org.hybridlb.app.core.StateUnreadableException;
import org.hybridlb.app.core.port.StateStore;

/**
 * The daemon's state store: one JSON file replaced by write-to-temp, fsync, atomic rename and
 * fsync of the directory, so a crash at any point leaves the old or the new file. Before each
 * replacement the current file (good: this store wrote it, or the controller read it) becomes the
 * last good copy {@code <file>.prev}, by a hard link renamed into place: the file itself is never
 * absent. A write that fails (a full disk) leaves both as they were and no temporary behind. The
 * files are readable by their owner only (mode 0600): the state holds the Cheetah cookie keys.
 */
public final class FileStateStore implements StateStore {
    static final String PREVIOUS = ".prev";
    static final String TEMPORARY = ".tmp";
    static final String UNREADABLE = ".unreadable-";
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    private static final Set<PosixFilePermission> OWNER_ONLY =
            PosixFilePermissions.fromString("rw-------");

    private final Path file;
    private final Path previous;

    public FileStateStore(Path file) {
        this.file = file.toAbsolutePath();
        this.previous = sibling(PREVIOUS);
    }

    public Path file() {
        return file;
    }

    /** The last good copy ({@code <file>.prev}). */
    public Path previousFile() {
        return previous;
    }

    private Path sibling(String suffix) {
        return file.resolveSibling(file.getFileName() + suffix);
    }

    @Override
    public String describe() {
        return "state file " + file;
    }

    @Override
    public String describePrevious() {
        return "last good copy " + previous;
    }

    /**
     * The file; empty on a first start. A missing file beside a last good copy is not a first
     * start (this store never removes the file): refused, naming both and what to do.
     */
    @Override
    public Optional<String> load() {
        Optional<String> text = read(file);
        if (text.isEmpty() && Files.exists(previous)) {
            throw new StateUnreadableException(describe() + " is missing but its " + describePrevious()
                    + " exists: restore it (mv " + previous + " " + file + ") to go on from it, or remove it too to "
                    + "start with an empty state");
        }
        return text;
    }

    @Override
    public Optional<String> loadPrevious() {
        return read(previous);
    }

    private static Optional<String> read(Path p) {
        try {
            return Optional.of(Files.readString(p, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + p + ": " + reason(e), e);
        }
    }

    @Override
    public String setAsideUnreadable() {
        Path aside = sibling(UNREADABLE + STAMP.format(Instant.now()));
        try {
            Files.move(file, aside, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot move the unreadable " + describe() + " aside to " + aside
                    + ": " + reason(e), e);
        }
        return aside.toString();
    }

    @Override
    public void save(String json) {
        Path dir = file.getParent();
        Path tmp = sibling(TEMPORARY);
        try {
            Files.createDirectories(dir);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ownerOnly(tmp); // before the first byte: the state holds the Cheetah keys
                ByteBuffer buf = ByteBuffer.wrap(json.getBytes(StandardCharsets.UTF_8));
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            if (Files.exists(file)) {
                ownerOnly(file); // a file an older version wrote, and so its last good copy (a hard link)
            }
            keepPrevious();
            move(tmp, file);
            syncDirectory(dir);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp); // a full disk: give the space back
            } catch (IOException ignored) {
                // the temporary is overwritten by the next save anyway
            }
            throw new UncheckedIOException("cannot write " + describe() + ": " + reason(e), e);
        }
    }

    /** The current file becomes the last good copy: a hard link (no data written), else a synced copy. */
    private void keepPrevious() throws IOException {
        if (!Files.exists(file)) {
            return;
        }
        Path link = sibling(PREVIOUS + TEMPORARY);
        Files.deleteIfExists(link);
        try {
            Files.createLink(link, file);
        } catch (UnsupportedOperationException | IOException e) {
            Files.copy(file, link, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel ch = FileChannel.open(link, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
        }
        move(link, previous);
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("the file system of " + to.getParent() + " cannot rename atomically", e);
        }
    }

    /** rw------- where the file system has POSIX modes. */
    private static void ownerOnly(Path p) throws IOException {
        if (Files.getFileStore(p).supportsFileAttributeView(PosixFileAttributeView.class)) {
            Files.setPosixFilePermissions(p, OWNER_ONLY);
        }
    }

    /** "No space left on device", "Permission denied", ...: what the operator needs, without the stack. */
    private static String reason(IOException e) {
        String m = e.getMessage();
        if (e instanceof java.nio.file.FileSystemException) {
            String r = ((java.nio.file.FileSystemException) e).getReason();
            m = r != null ? r : e.getClass().getSimpleName() + " " + m;
        }
        return m != null ? m : e.getClass().getSimpleName();
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
