package org.hybridlb.app.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.hybridlb.app.core.StateUnreadableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileStateStoreTest {
    static List<String> files(Path dir) throws Exception {
        try (var files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    @Test
    void savesReplaceTheFileWholeAndKeepThePreviousOneAsTheLastGoodCopy(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("sub/state.json"));
        assertEquals(Optional.empty(), s.load());
        assertEquals(Optional.empty(), s.loadPrevious());
        s.save("{\"a\":1}");
        assertEquals(List.of("state.json"), files(dir.resolve("sub")), "a first save has nothing to keep");
        s.save("{\"b\":2}");
        s.save("{\"c\":3}");
        FileStateStore again = new FileStateStore(dir.resolve("sub/state.json"));
        assertEquals(Optional.of("{\"c\":3}"), again.load());
        assertEquals(Optional.of("{\"b\":2}"), again.loadPrevious(), "the copy is the one before the last save");
        assertEquals(List.of("state.json", "state.json.prev"), files(dir.resolve("sub")), "no temporary left behind");
    }

    @Test
    void theFileAndItsCopyAreTheOwnersOnlyEvenWhenAnOlderVersionWroteThem(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("state.json");
        Files.writeString(f, "{\"format\":1}");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        FileStateStore store = new FileStateStore(f);
        store.save("{\"format\":1,\"n\":1}");
        for (Path p : List.of(f, store.previousFile())) {
            assertEquals("rw-------", PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(p)), p.toString());
        }
    }

    @Test
    void aLeftoverTemporaryFromACrashIsIgnoredAndReplaced(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("state.json"));
        s.save("{\"old\":true}");
        Files.writeString(dir.resolve("state.json.tmp"), "{\"half"); // crash while writing
        Files.writeString(dir.resolve("state.json.prev.tmp"), "{\"half"); // crash while keeping the copy
        assertEquals(Optional.of("{\"old\":true}"), s.load());
        s.save("{\"new\":true}");
        assertEquals(Optional.of("{\"new\":true}"), s.load());
        assertEquals(Optional.of("{\"old\":true}"), s.loadPrevious());
        assertFalse(Files.exists(dir.resolve("state.json.tmp")));
        assertTrue(Files.isRegularFile(dir.resolve("state.json")));
    }

    @Test
    void aWriteThatFailsSaysWhyAndLeavesTheFileAndItsCopyAsTheyWere(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("state.json"));
        s.save("{\"one\":1}");
        s.save("{\"two\":2}");
        Files.createDirectory(dir.resolve("state.json.tmp")); // the temporary cannot be written (as root too)
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> s.save("{\"three\":3}"));
        assertTrue(e.getMessage().startsWith("cannot write state file " + dir.resolve("state.json") + ": "),
                e.getMessage());
        assertEquals(Optional.of("{\"two\":2}"), s.load());
        assertEquals(Optional.of("{\"one\":1}"), s.loadPrevious());
        assertEquals(List.of("state.json", "state.json.prev"), files(dir), "the failed temporary is removed");
    }

    @Test
    void aMissingFileBesideItsLastGoodCopyIsNotAFirstStart(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("state.json"));
        s.save("{\"one\":1}");
        s.save("{\"two\":2}");
        Files.delete(dir.resolve("state.json"));
        StateUnreadableException e = assertThrows(StateUnreadableException.class, s::load);
        assertTrue(e.getMessage().contains("state file " + dir.resolve("state.json") + " is missing but its last good "
                + "copy " + dir.resolve("state.json.prev") + " exists"), e.getMessage());
        assertTrue(e.getMessage().contains("mv "), e.getMessage());
    }

    @Test
    void anUnreadableFileIsSetAsideAndTheNextSaveKeepsTheGoodCopy(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("state.json"));
        s.save("{\"good\":1}");
        s.save("{\"good\":2}");
        Files.writeString(dir.resolve("state.json"), "{\"go");
        String aside = s.setAsideUnreadable();
        assertEquals("{\"go", Files.readString(Path.of(aside)), "kept for inspection");
        assertTrue(Path.of(aside).getFileName().toString().startsWith("state.json.unreadable-"), aside);
        s.save("{\"good\":3}");
        assertEquals(Optional.of("{\"good\":3}"), s.load());
        assertEquals(Optional.of("{\"good\":1}"), s.loadPrevious(), "the unreadable file never becomes the copy");
    }
}
