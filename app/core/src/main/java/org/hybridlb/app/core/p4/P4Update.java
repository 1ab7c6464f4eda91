package org.hybridlb.app.core.p4;

import java.util.Objects;

/** One P4Runtime update: insert, modify or delete an entity. */
public final class P4Update {
    /** P4Runtime's {@code Update.Type}. */
    public enum Type { INSERT, MODIFY, DELETE }

    public final Type type;
    public final P4Entity entity;

    public P4Update(Type type, P4Entity entity) {
        this.type = Objects.requireNonNull(type);
        this.entity = Objects.requireNonNull(entity);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof P4Update && type == ((P4Update) o).type && entity.equals(((P4Update) o).entity);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, entity);
    }

    @Override
    public String toString() {
        return type + " " + entity;
    }
}
