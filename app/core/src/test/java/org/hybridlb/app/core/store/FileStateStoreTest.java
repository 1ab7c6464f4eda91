package org.hybridlb.app.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileStateStoreTest {
    @Test
    void savesReplaceTheFileWholeAndLeaveNoTemporary(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("sub/state.json"));
        assertEquals(Optional.empty(), s.load());
        s.save("{\"a\":1}");
        s.save("{\"b\":2}");
        assertEquals(Optional.of("{\"b\":2}"), new FileStateStore(dir.resolve("sub/state.json")).load());
        try (var files = Files.list(dir.resolve("sub"))) {
            assertEquals(1, files.count(), "no temporary file left behind");
        }
    }

    @Test
    void aLeftoverTemporaryFromACrashIsIgnoredAndReplaced(@TempDir Path dir) throws Exception {
        FileStateStore s = new FileStateStore(dir.resolve("state.json"));
        s.save("{\"old\":true}");
        Files.writeString(dir.resolve("state.json.tmp"), "{\"half"); // crash while writing
        assertEquals(Optional.of("{\"old\":true}"), s.load());
        s.save("{\"new\":true}");
        assertEquals(Optional.of("{\"new\":true}"), s.load());
        assertFalse(Files.exists(dir.resolve("state.json.tmp")));
        assertTrue(Files.isRegularFile(dir.resolve("state.json")));
    }
}
