package org.hybridlb.app.core.hmux;

import java.util.Comparator;
import java.util.Objects;

/**
 * One item of a switch's intent, by what identifies it: an entry by its service, a route by its
 * VIP, an aggregate by its prefix, the fallback, or a {@link Item#FOREIGN} object on the device
 * that carries hybridlb's marks but belongs to no item (named the way its southbound removes it).
 */
public final class ItemKey implements Comparable<ItemKey> {
    /** The kinds of items. */
    public enum Item { ENTRY, ROUTE, AGGREGATE, FALLBACK, FOREIGN }

    private static final Comparator<ItemKey> ORDER = Comparator.comparing((ItemKey k) -> k.item)
            .thenComparing(k -> k.match, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(k -> k.name);

    public final Item item;
    /** The service of an entry; null otherwise. */
    public final ServiceMatch match;
    /** The VIP of a route, the prefix of an aggregate, the device's name of a foreign object; "" otherwise. */
    public final String name;

    private ItemKey(Item item, ServiceMatch match, String name) {
        this.item = item;
        this.match = match;
        this.name = Objects.requireNonNull(name);
    }

    public static ItemKey entry(ServiceMatch m) {
        return new ItemKey(Item.ENTRY, Objects.requireNonNull(m), "");
    }

    public static ItemKey route(String vip) {
        return new ItemKey(Item.ROUTE, null, vip);
    }

    public static ItemKey aggregate(String prefix) {
        return new ItemKey(Item.AGGREGATE, null, prefix);
    }

    public static ItemKey fallback() {
        return new ItemKey(Item.FALLBACK, null, "");
    }

    public static ItemKey foreign(String deviceName) {
        return new ItemKey(Item.FOREIGN, null, deviceName);
    }

    @Override
    public int compareTo(ItemKey o) {
        return ORDER.compare(this, o);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ItemKey)) {
            return false;
        }
        ItemKey k = (ItemKey) o;
        return item == k.item && Objects.equals(match, k.match) && name.equals(k.name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(item, match, name);
    }

    @Override
    public String toString() {
        switch (item) {
            case ENTRY:
                return "entry " + match;
            case FALLBACK:
                return "fallback";
            default:
                return item.name().toLowerCase(java.util.Locale.ROOT) + " " + name;
        }
    }
}
