package org.hybridlb.solver.io;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;

/**
 * Reads and writes the shared data model as JSON. Every read is checked against the schema,
 * then against the rules a schema cannot say (unique ids, references, VIP inside its aggregate);
 * the first problem is thrown as an {@link InvalidInputException} naming file, field and reason.
 */
public final class ModelIo {
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private ModelIo() {
    }

    public static Topology readTopology(Path file) {
        Topology t = read(file, Schema.TOPOLOGY, Topology.class);
        ModelChecks.checkTopology(t, file.toString());
        return t;
    }

    public static VipSet readVips(Path file) {
        VipSet v = read(file, Schema.VIPS, VipSet.class);
        ModelChecks.checkVips(v, file.toString());
        return v;
    }

    /** Traffic is checked against the VIPs and topology it refers to. */
    public static TrafficTrace readTraffic(Path file, VipSet vips, Topology topology) {
        TrafficTrace t = read(file, Schema.TRAFFIC, TrafficTrace.class);
        ModelChecks.checkTraffic(t, vips, topology, file.toString());
        return t;
    }

    public static Assignment readAssignment(Path file, Topology topology) {
        Assignment a = read(file, Schema.ASSIGNMENT, Assignment.class);
        ModelChecks.checkAssignment(a, topology, file.toString());
        return a;
    }

    public static MigrationPlan readPlan(Path file) {
        return read(file, Schema.MIGRATION_PLAN, MigrationPlan.class);
    }

    /** Reads a file, validates it against {@code schema} and maps it to {@code type}. */
    public static <T> T read(Path file, Schema schema, Class<T> type) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new InvalidInputException(file.toString(), "", "file not found");
        } catch (IOException e) {
            throw new InvalidInputException(file.toString(), "", "cannot read: " + e.getMessage());
        }
        return parse(text, file.toString(), schema, type);
    }

    /** Parses a JSON text from {@code source} (a file name or a request), with the same checks. */
    public static <T> T parse(String json, String source, Schema schema, Class<T> type) {
        JsonNode tree;
        try {
            tree = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidInputException(source, where(e), "malformed JSON: " + e.getOriginalMessage());
        }
        if (tree == null || tree.isMissingNode()) {
            throw new InvalidInputException(source, "", "empty document");
        }
        schema.validate(tree, source);
        try {
            return MAPPER.treeToValue(tree, type);
        } catch (JsonProcessingException e) {
            throw new InvalidInputException(source, where(e), e.getOriginalMessage());
        }
    }

    public static void write(Path file, Object value) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            MAPPER.writeValue(file.toFile(), value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void write(OutputStream out, Object value) {
        try {
            MAPPER.writeValue(out, value);
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static String toJson(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String where(JsonProcessingException e) {
        if (e instanceof JsonMappingException) {
            JsonPointer p = JsonPointer.empty();
            for (JsonMappingException.Reference r : ((JsonMappingException) e).getPath()) {
                p = r.getFieldName() != null ? p.appendProperty(r.getFieldName()) : p.appendIndex(r.getIndex());
            }
            if (!p.toString().isEmpty()) {
                return p.toString();
            }
        }
        return e.getLocation() == null ? ""
                : "line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
    }
}
