"""P4Runtime entities built by P4Info name (the shape of fabric-tna's test helpers):
tests, the benchmark and the emulation write the switch with these, never with raw
ids.  Values are ints, IPv4 strings or MAC strings; each is encoded as the canonical
bytestring of its field's width.
"""
import ipaddress
import os

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
from google.protobuf import text_format  # noqa: E402
from p4.config.v1 import p4info_pb2  # noqa: E402
from p4.v1 import p4runtime_pb2  # noqa: E402

P4INFO_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "p4info")


def load_p4info(profile):
    info = p4info_pb2.P4Info()
    with open(os.path.join(P4INFO_DIR, f"{profile}.p4info.txtpb")) as f:
        text_format.Parse(f.read(), info)
    return info


def to_int(value):
    if isinstance(value, int):
        return value
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if ":" in value:
        return int(value.replace(":", ""), 16)
    return int(ipaddress.IPv4Address(value))


def encode(value):
    v = to_int(value)
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


class Builder:
    def __init__(self, p4info):
        self.p4info = p4info
        self.tables = {t.preamble.name: t for t in p4info.tables}
        self.actions = {a.preamble.name: a for a in p4info.actions}
        self.profiles = {p.preamble.name: p for p in p4info.action_profiles}
        self.counters = {c.preamble.name: c for c in p4info.counters}
        self.registers = {r.preamble.name: r for r in p4info.registers}

    def action(self, msg, name, **params):
        info = self.actions[name]
        msg.action_id = info.preamble.id
        for p in info.params:
            if p.name in params:
                msg.params.add(param_id=p.id, value=encode(params[p.name]))
        return msg

    def table_entry(self, table, match=None, action=None, params=None, member=None,
                    group=None, default=False):
        """match: {field: value, or (value, prefix length) for LPM}."""
        info = self.tables[table]
        e = p4runtime_pb2.TableEntry(table_id=info.preamble.id, is_default_action=default)
        fields = {mf.name: mf for mf in info.match_fields}
        for fname, value in (match or {}).items():
            mf = fields[fname]
            fm = e.match.add(field_id=mf.id)
            if mf.match_type == p4info_pb2.MatchField.LPM:
                fm.lpm.value, fm.lpm.prefix_len = encode(value[0]), value[1]
            else:
                fm.exact.value = encode(value)
        if action is not None:
            self.action(e.action.action, action, **(params or {}))
        elif member is not None:
            e.action.action_profile_member_id = member
        elif group is not None:
            e.action.action_profile_group_id = group
        return e

    def member(self, profile, member_id, action, **params):
        m = p4runtime_pb2.ActionProfileMember(
            action_profile_id=self.profiles[profile].preamble.id, member_id=member_id)
        self.action(m.action, action, **params)
        return m

    def group(self, profile, group_id, members, max_size=0):
        """members: [member id] or [(member id, weight)]."""
        g = p4runtime_pb2.ActionProfileGroup(
            action_profile_id=self.profiles[profile].preamble.id, group_id=group_id,
            max_size=max_size)
        for m in members:
            mid, weight = m if isinstance(m, tuple) else (m, 1)
            g.members.add(member_id=mid, weight=weight)
        return g

    def counter_entry(self, name, index=None):
        c = p4runtime_pb2.CounterEntry(counter_id=self.counters[name].preamble.id)
        if index is not None:
            c.index.index = index
        return c

    def register_entry(self, name, index=None, value=None):
        r = p4runtime_pb2.RegisterEntry(register_id=self.registers[name].preamble.id)
        if index is not None:
            r.index.index = index
        if value is not None:
            r.data.bitstring = encode(value)
        return r

    @staticmethod
    def update(kind, entity_msg):
        """An Update of type kind ('INSERT', 'MODIFY', 'DELETE') for any entity message."""
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind))
        field = {p4runtime_pb2.TableEntry: "table_entry",
                 p4runtime_pb2.ActionProfileMember: "action_profile_member",
                 p4runtime_pb2.ActionProfileGroup: "action_profile_group",
                 p4runtime_pb2.CounterEntry: "counter_entry",
                 p4runtime_pb2.RegisterEntry: "register_entry",
                 p4runtime_pb2.DirectCounterEntry: "direct_counter_entry"}[type(entity_msg)]
        getattr(u.entity, field).CopyFrom(entity_msg)
        return u

    @staticmethod
    def entity(entity_msg):
        return Builder.update("INSERT", entity_msg).entity
