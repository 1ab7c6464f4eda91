package org.hybridlb.standalone.p4rt;

import com.google.protobuf.ByteString;
import com.google.protobuf.TextFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.p4.P4Action;
import org.hybridlb.app.core.p4.P4Entity;
import org.hybridlb.app.core.p4.P4Group;
import org.hybridlb.app.core.p4.P4Match;
import org.hybridlb.app.core.p4.P4Member;
import org.hybridlb.app.core.p4.P4TableEntry;
import org.hybridlb.app.core.p4.P4Update;
import org.hybridlb.app.core.p4.P4Value;
import p4.config.v1.P4InfoOuterClass;
import p4.v1.P4RuntimeOuterClass;

/**
 * The core's P4 entities as P4Runtime v1 messages and back. Names are taken from the P4Info on the
 * way back (a device gives ids only). The controller's cookie travels in {@code TableEntry.metadata}
 * (P4Runtime 1.3 §9.1: opaque to the device, returned on read) as 8 big-endian bytes.
 */
public final class P4rtCodec {
    public final P4InfoOuterClass.P4Info p4info;
    private final Map<Integer, String> names = new HashMap<>();
    private final Map<Integer, Map<Integer, String>> paramNames = new HashMap<>();
    private final Map<Integer, Map<Integer, String>> fieldNames = new HashMap<>();

    public P4rtCodec(P4InfoOuterClass.P4Info p4info) {
        this.p4info = p4info;
        for (P4InfoOuterClass.Table t : p4info.getTablesList()) {
            names.put(t.getPreamble().getId(), t.getPreamble().getName());
            Map<Integer, String> f = new HashMap<>();
            t.getMatchFieldsList().forEach(m -> f.put(m.getId(), m.getName()));
            fieldNames.put(t.getPreamble().getId(), f);
        }
        for (P4InfoOuterClass.Action a : p4info.getActionsList()) {
            names.put(a.getPreamble().getId(), a.getPreamble().getName());
            Map<Integer, String> p = new HashMap<>();
            a.getParamsList().forEach(x -> p.put(x.getId(), x.getName()));
            paramNames.put(a.getPreamble().getId(), p);
        }
        p4info.getActionProfilesList().forEach(x -> names.put(x.getPreamble().getId(), x.getPreamble().getName()));
    }

    /** A P4Info in protobuf text format (p4/p4info/*.p4info.txtpb). */
    public static P4InfoOuterClass.P4Info loadP4Info(Path file) throws IOException {
        P4InfoOuterClass.P4Info.Builder b = P4InfoOuterClass.P4Info.newBuilder();
        TextFormat.getParser().merge(Files.readString(file), b);
        return b.build();
    }

    /** Whether the P4Info has an object with this id (a profile without it cannot hold the layout). */
    boolean has(int id) {
        return names.containsKey(id);
    }

    public P4RuntimeOuterClass.Update update(P4Update u) {
        return P4RuntimeOuterClass.Update.newBuilder().setType(P4RuntimeOuterClass.Update.Type.valueOf(u.type.name()))
                .setEntity(entity(u.entity)).build();
    }

    public static P4RuntimeOuterClass.Entity entity(P4Entity e) {
        P4RuntimeOuterClass.Entity.Builder b = P4RuntimeOuterClass.Entity.newBuilder();
        if (e instanceof P4TableEntry) {
            b.setTableEntry(tableEntry((P4TableEntry) e));
        } else if (e instanceof P4Member) {
            P4Member m = (P4Member) e;
            b.setActionProfileMember(P4RuntimeOuterClass.ActionProfileMember.newBuilder()
                    .setActionProfileId(m.profileId).setMemberId((int) m.memberId).setAction(action(m.action)));
        } else {
            P4Group g = (P4Group) e;
            P4RuntimeOuterClass.ActionProfileGroup.Builder gb = P4RuntimeOuterClass.ActionProfileGroup.newBuilder()
                    .setActionProfileId(g.profileId).setGroupId((int) g.groupId).setMaxSize(g.maxSize);
            g.memberIds.forEach(id -> gb.addMembers(P4RuntimeOuterClass.ActionProfileGroup.Member.newBuilder()
                    .setMemberId(id.intValue()).setWeight(1)));
            b.setActionProfileGroup(gb);
        }
        return b.build();
    }

    private static P4RuntimeOuterClass.TableEntry tableEntry(P4TableEntry e) {
        P4RuntimeOuterClass.TableEntry.Builder b = P4RuntimeOuterClass.TableEntry.newBuilder()
                .setTableId(e.tableId).setPriority(e.priority);
        for (P4Match m : e.matches) {
            P4RuntimeOuterClass.FieldMatch.Builder f = P4RuntimeOuterClass.FieldMatch.newBuilder().setFieldId(m.fieldId);
            ByteString v = ByteString.copyFrom(m.value.bytes());
            if (m.isLpm()) {
                f.setLpm(P4RuntimeOuterClass.FieldMatch.LPM.newBuilder().setValue(v).setPrefixLen(m.prefixLen));
            } else {
                f.setExact(P4RuntimeOuterClass.FieldMatch.Exact.newBuilder().setValue(v));
            }
            b.addMatch(f);
        }
        P4RuntimeOuterClass.TableAction.Builder a = P4RuntimeOuterClass.TableAction.newBuilder();
        if (e.action != null) {
            a.setAction(action(e.action));
        } else if (e.groupId != null) {
            a.setActionProfileGroupId(e.groupId.intValue());
        } else {
            a.setActionProfileMemberId(e.memberId.intValue());
        }
        b.setAction(a);
        if (e.cookie != 0) {
            b.setMetadata(ByteString.copyFrom(ByteBuffer.allocate(8).putLong(e.cookie).array()));
        }
        return b.build();
    }

    private static P4RuntimeOuterClass.Action action(P4Action a) {
        P4RuntimeOuterClass.Action.Builder b = P4RuntimeOuterClass.Action.newBuilder().setActionId(a.id);
        a.params.forEach((id, v) -> b.addParams(P4RuntimeOuterClass.Action.Param.newBuilder().setParamId(id)
                .setValue(ByteString.copyFrom(v.bytes()))));
        return b.build();
    }

    /** The core's entity for what a device returned; null for an entity of a kind the HMux layer does not write. */
    public P4Entity fromProto(P4RuntimeOuterClass.Entity e) {
        switch (e.getEntityCase()) {
            case TABLE_ENTRY:
                return tableEntry(e.getTableEntry());
            case ACTION_PROFILE_MEMBER: {
                P4RuntimeOuterClass.ActionProfileMember m = e.getActionProfileMember();
                return new P4Member(name(m.getActionProfileId()), m.getActionProfileId(),
                        Integer.toUnsignedLong(m.getMemberId()), action(m.getAction()));
            }
            case ACTION_PROFILE_GROUP: {
                P4RuntimeOuterClass.ActionProfileGroup g = e.getActionProfileGroup();
                List<Long> ids = new ArrayList<>();
                for (P4RuntimeOuterClass.ActionProfileGroup.Member m : g.getMembersList()) {
                    for (int i = 0; i < Math.max(1, m.getWeight()); i++) {
                        ids.add(Integer.toUnsignedLong(m.getMemberId())); // a weight w is w units
                    }
                }
                return new P4Group(name(g.getActionProfileId()), g.getActionProfileId(),
                        Integer.toUnsignedLong(g.getGroupId()), ids, g.getMaxSize());
            }
            default:
                return null;
        }
    }

    private P4TableEntry tableEntry(P4RuntimeOuterClass.TableEntry t) {
        Map<Integer, String> fields = fieldNames.getOrDefault(t.getTableId(), Map.of());
        List<P4Match> matches = new ArrayList<>();
        for (P4RuntimeOuterClass.FieldMatch f : t.getMatchList()) {
            String n = fields.getOrDefault(f.getFieldId(), "#" + f.getFieldId());
            switch (f.getFieldMatchTypeCase()) {
                case EXACT:
                    matches.add(P4Match.exact(f.getFieldId(), n, P4Value.of(f.getExact().getValue().toByteArray())));
                    break;
                case LPM:
                    matches.add(P4Match.lpm(f.getFieldId(), n, P4Value.of(f.getLpm().getValue().toByteArray()),
                            f.getLpm().getPrefixLen()));
                    break;
                default:
                    // ternary, range, optional: none in the tables this layer reads; keep the entry distinct
                    matches.add(P4Match.exact(f.getFieldId(), n + "?", P4Value.of(f.toByteArray())));
            }
        }
        long cookie = 0;
        byte[] md = t.getMetadata().toByteArray();
        if (md.length == 8) {
            cookie = ByteBuffer.wrap(md).getLong();
        }
        P4RuntimeOuterClass.TableAction a = t.getAction();
        String table = name(t.getTableId());
        switch (a.getTypeCase()) {
            case ACTION:
                return P4TableEntry.read(table, t.getTableId(), matches, t.getPriority(), action(a.getAction()), null, null, cookie);
            case ACTION_PROFILE_GROUP_ID:
                return P4TableEntry.read(table, t.getTableId(), matches, t.getPriority(), null,
                        Integer.toUnsignedLong(a.getActionProfileGroupId()), null, cookie);
            case ACTION_PROFILE_MEMBER_ID:
                return P4TableEntry.read(table, t.getTableId(), matches, t.getPriority(), null, null,
                        Integer.toUnsignedLong(a.getActionProfileMemberId()), cookie);
            default:
                return null; // an action set or no action: none of this layer's
        }
    }

    private P4Action action(P4RuntimeOuterClass.Action a) {
        Map<Integer, String> pn = paramNames.getOrDefault(a.getActionId(), Map.of());
        P4Action.Builder b = P4Action.of(name(a.getActionId()), a.getActionId());
        a.getParamsList().forEach(p -> b.param(p.getParamId(), pn.getOrDefault(p.getParamId(), "#" + p.getParamId()),
                P4Value.of(p.getValue().toByteArray())));
        return b.build();
    }

    private String name(int id) {
        return names.getOrDefault(id, String.format("#%08x", id));
    }
}
