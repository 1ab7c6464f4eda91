package org.hybridlb.app.core.p4;

import java.util.ArrayList;
import java.util.List;

/**
 * The updates that turn one {@link P4State} into another, in batches a device may apply each
 * whole and in any order within (P4Runtime 1.3 §12.2 lets a server reorder a batch, so an entity
 * and what it refers to never share one): make before break. First inserts and modifications by
 * rank (members and the cookie servers a switch accepts, then the groups listing the members, then
 * the entries that point at groups, then the entries that lead to those), then deletions in the
 * reverse order. Batches with nothing are left out.
 */
public final class P4Diff {
    /** Entity ranks: member and cookie server entry 0, group 1, entry 2 (a table other entries lead to) and 3. */
    static final int RANKS = 4;

    private P4Diff() {
    }

    public static List<List<P4Update>> batches(P4State have, P4State want) {
        List<List<P4Update>> puts = new ArrayList<>();
        List<List<P4Update>> deletes = new ArrayList<>();
        for (int r = 0; r < RANKS; r++) {
            puts.add(new ArrayList<>());
            deletes.add(new ArrayList<>());
        }
        for (P4Entity w : want.all()) {
            P4Entity h = have.get(w.key());
            if (h == null) {
                puts.get(rank(w)).add(new P4Update(P4Update.Type.INSERT, w));
            } else if (!h.equals(w)) {
                puts.get(rank(w)).add(new P4Update(P4Update.Type.MODIFY, w));
            }
        }
        for (P4Entity h : have.all()) {
            if (want.get(h.key()) == null) {
                deletes.get(rank(h)).add(new P4Update(P4Update.Type.DELETE, h));
            }
        }
        List<List<P4Update>> out = new ArrayList<>();
        puts.stream().filter(b -> !b.isEmpty()).forEach(out::add);
        for (int r = RANKS - 1; r >= 0; r--) {
            if (!deletes.get(r).isEmpty()) {
                out.add(deletes.get(r));
            }
        }
        return out;
    }

    /** Every update of {@code batches}, in order. */
    public static List<P4Update> flat(List<List<P4Update>> batches) {
        List<P4Update> out = new ArrayList<>();
        batches.forEach(out::addAll);
        return out;
    }

    static int rank(P4Entity e) {
        return e.dependencyRank();
    }
}
