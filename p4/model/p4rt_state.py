"""The control-plane state of a P4 switch as P4Runtime defines it: table entries,
action profile members and groups, counters, direct counters and registers, checked
against a P4Info, with the specification's error codes (P4Runtime 1.x, "Write RPC"
and "P4 Entity Messages").  The reference pipeline (pipeline.py) looks packets up in
it; the P4Runtime server (p4rt_server.py) writes and reads it.

Everything is keyed by P4Info ids on the wire and by names towards the pipeline.
"""
import os

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
from p4.config.v1 import p4info_pb2  # noqa: E402
from p4.v1 import p4runtime_pb2  # noqa: E402
from p4rt_errors import (ALREADY_EXISTS, FAILED_PRECONDITION, INVALID_ARGUMENT,  # noqa: E402
                         NOT_FOUND, PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNIMPLEMENTED,
                         P4RuntimeError, encode_bytes)
from p4rt_read import StateReader  # noqa: E402

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE


def _bad(message):
    return P4RuntimeError(INVALID_ARGUMENT, message)


def _check_presence(op, old, what):
    """The spec's rule for every entity: INSERT of an existing one is ALREADY_EXISTS,
    MODIFY or DELETE of a missing one NOT_FOUND."""
    if op == INSERT and old is not None:
        raise P4RuntimeError(ALREADY_EXISTS, f"{what} exists")
    if op != INSERT and old is None:
        raise P4RuntimeError(NOT_FOUND, f"no {what}")


def decode_bytes(data, bitwidth, what):
    """A P4Runtime bytestring as an int, refused when it does not fit `bitwidth`."""
    if not data:
        raise _bad(f"{what}: empty bytestring")
    value = int.from_bytes(data, "big")
    if len(data) > (bitwidth + 7) // 8 or value >> bitwidth:
        raise _bad(f"{what}: value 0x{data.hex()} does not fit {bitwidth} bits")
    return value


class Action:
    """A decoded action: P4Info name and {param name: int}."""
    __slots__ = ("name", "params", "id")

    def __init__(self, name, params, action_id):
        self.name, self.params, self.id = name, params, action_id

    def __eq__(self, other):
        return isinstance(other, Action) and (self.id, self.params) == (other.id, other.params)

    def __repr__(self):
        return f"Action({self.name}, {self.params})"


class TableEntryState:
    __slots__ = ("key", "priority", "action", "member_id", "group_id", "proto",
                 "packets", "bytes")

    def __init__(self, key, priority, proto):
        self.key, self.priority, self.proto = key, priority, proto
        self.action = self.member_id = self.group_id = None
        self.packets = self.bytes = 0


class TableState:
    def __init__(self, info, profile_id):
        self.info = info
        self.profile_id = profile_id
        self.fields = {mf.id: mf for mf in info.match_fields}
        self.kinds = [mf.match_type for mf in info.match_fields]
        self.entries = {}               # (key, priority) -> TableEntryState
        self.lpm = {}                   # prefix length -> {masked value: entry} (one LPM field)
        self.default = None             # Action of the default entry
        self.has_direct_counter = bool(info.direct_resource_ids)


class ProfileState:
    def __init__(self, info):
        self.info = info
        self.members = {}               # member id -> Action
        self.groups = {}                # group id -> (max_size, [(member id, weight)])
        self.slots = {}                 # group id -> [Action], the selector's view
        self.tables = set(info.table_ids)


class SwitchState(StateReader):
    def __init__(self, p4info):
        self.p4info = p4info
        self.actions = {a.preamble.id: a for a in p4info.actions}
        self.action_ids = {a.preamble.name: a.preamble.id for a in p4info.actions}
        self.tables, self.table_ids = {}, {}
        for t in p4info.tables:
            self.tables[t.preamble.id] = TableState(t, t.implementation_id or None)
            self.table_ids[t.preamble.name] = t.preamble.id
        for t in self.tables.values():
            if t.info.const_default_action_id:
                t.default = self._action_of(t.info.const_default_action_id)
            elif any(r.id == self.action_ids.get("NoAction") for r in t.info.action_refs):
                t.default = self._action_of(self.action_ids["NoAction"])
        self.profiles = {p.preamble.id: ProfileState(p) for p in p4info.action_profiles}
        self.profile_ids = {p.preamble.name: p.preamble.id for p in p4info.action_profiles}
        self.counters = {c.preamble.id: c for c in p4info.counters}
        self.counter_ids = {c.preamble.name: c.preamble.id for c in p4info.counters}
        self.counter_data = {c.preamble.id: [[0, 0] for _ in range(c.size)] for c in p4info.counters}
        self.direct_counters = {c.preamble.id: c for c in p4info.direct_counters}
        self.registers = {r.preamble.id: r for r in p4info.registers}
        self.register_ids = {r.preamble.name: r.preamble.id for r in p4info.registers}
        self.register_data = {r.preamble.id: [0] * r.size for r in p4info.registers}

    # ------------------------------------------------------------ writes
    def write(self, update):
        """Applies one p4.v1.Update; returns a callable that undoes it.  Raises
        P4RuntimeError with the specification's code and changes nothing on error."""
        which = update.entity.WhichOneof("entity")
        handler = {"table_entry": self._write_table_entry,
                   "action_profile_member": self._write_member,
                   "action_profile_group": self._write_group,
                   "counter_entry": self._write_counter,
                   "direct_counter_entry": self._write_direct_counter,
                   "register_entry": self._write_register}.get(which)
        if handler is None:
            raise P4RuntimeError(UNIMPLEMENTED, f"entity {which} is not supported")
        if update.type not in (INSERT, MODIFY, DELETE):
            raise _bad("update type unspecified")
        return handler(update.type, getattr(update.entity, which))

    def _table(self, table_id):
        t = self.tables.get(table_id)
        if t is None:
            raise P4RuntimeError(NOT_FOUND, f"table id {table_id} is not in the P4Info")
        return t

    def _action_of(self, action_id, params=()):
        return Action(self.actions[action_id].preamble.name, dict(params), action_id)

    def _decode_action(self, action, allowed, what):
        info = self.actions.get(action.action_id)
        if info is None or action.action_id not in allowed:
            raise _bad(f"{what}: action id {action.action_id} is not an action of it")
        want = {p.id: p for p in info.params}
        params = {}
        for p in action.params:
            pinfo = want.get(p.param_id)
            if pinfo is None:
                raise _bad(f"{what}: action {info.preamble.name} has no param id {p.param_id}")
            if pinfo.name in params:
                raise _bad(f"{what}: param {pinfo.name} given twice")
            params[pinfo.name] = decode_bytes(p.value, pinfo.bitwidth,
                                              f"{what}: param {pinfo.name}")
        missing = [p.name for p in info.params if p.name not in params]
        if missing:
            raise _bad(f"{what}: action {info.preamble.name} misses params {missing}")
        return Action(info.preamble.name, params, action.action_id)

    def _decode_key(self, t, entry):
        name = t.info.preamble.name
        values = {}
        for fm in entry.match:
            mf = t.fields.get(fm.field_id)
            if mf is None:
                raise _bad(f"{name}: no match field id {fm.field_id}")
            if mf.id in values:
                raise _bad(f"{name}: match field {mf.name} given twice")
            what = f"{name}: match field {mf.name}"
            kind = fm.WhichOneof("field_match_type")
            if mf.match_type == p4info_pb2.MatchField.EXACT and kind == "exact":
                values[mf.id] = decode_bytes(fm.exact.value, mf.bitwidth, what)
            elif mf.match_type == p4info_pb2.MatchField.LPM and kind == "lpm":
                plen = fm.lpm.prefix_len
                value = decode_bytes(fm.lpm.value, mf.bitwidth, what)
                if not 0 < plen <= mf.bitwidth:
                    raise _bad(f"{what}: prefix length {plen} (1..{mf.bitwidth}; omit the "
                               "field for a wildcard)")
                if value & ((1 << (mf.bitwidth - plen)) - 1):
                    raise _bad(f"{what}: bits set past the prefix length {plen}")
                values[mf.id] = (value, plen)
            else:
                raise _bad(f"{what}: {kind} match given for a "
                           f"{p4info_pb2.MatchField.MatchType.Name(mf.match_type)} field")
        key = []
        for mf in t.info.match_fields:
            if mf.id not in values:
                if mf.match_type == p4info_pb2.MatchField.EXACT:
                    raise _bad(f"{name}: exact match field {mf.name} missing")
                values[mf.id] = (0, 0)
            key.append(values[mf.id])
        if entry.priority:
            raise _bad(f"{name}: priority must be 0 in a table without ternary, range or "
                       "optional fields")
        return tuple(key)

    def _allowed(self, t, default):
        refs = t.info.action_refs
        scope_ok = (p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
                    p4info_pb2.ActionRef.DEFAULT_ONLY if default else p4info_pb2.ActionRef.TABLE_ONLY)
        return {r.id for r in refs if r.scope in scope_ok}

    def _write_table_entry(self, op, entry):
        t = self._table(entry.table_id)
        name = t.info.preamble.name
        if entry.is_default_action:
            return self._write_default(t, op, entry)
        key = self._decode_key(t, entry)
        k = (key, entry.priority)
        old = t.entries.get(k)
        _check_presence(op, old, f"{name}: entry with that match key")
        if op == DELETE:
            self._unlink(t, old)
            return lambda: self._link(t, old)
        if op == INSERT and len(t.entries) >= t.info.size:
            raise P4RuntimeError(RESOURCE_EXHAUSTED, f"{name}: table full ({t.info.size} entries)")
        new = TableEntryState(key, entry.priority, None)
        self._bind_action(t, new, entry.action, name)
        stored = p4runtime_pb2.TableEntry()
        stored.CopyFrom(entry)
        stored.ClearField("counter_data")
        self._canonical_entry(stored)
        new.proto = stored
        if old is not None:
            new.packets, new.bytes = old.packets, old.bytes
            if entry.HasField("counter_data"):
                new.packets = entry.counter_data.packet_count
                new.bytes = entry.counter_data.byte_count
            self._unlink(t, old)
            self._link(t, new)
            return lambda: (self._unlink(t, new), self._link(t, old))
        if entry.HasField("counter_data"):
            new.packets, new.bytes = entry.counter_data.packet_count, entry.counter_data.byte_count
        self._link(t, new)
        return lambda: self._unlink(t, new)

    def _bind_action(self, t, new, action, name):
        kind = action.WhichOneof("type")
        if t.profile_id:
            prof = self.profiles[t.profile_id]
            if kind == "action_profile_member_id":
                if action.action_profile_member_id not in prof.members:
                    raise P4RuntimeError(NOT_FOUND, f"{name}: no member "
                                         f"{action.action_profile_member_id}")
                new.member_id = action.action_profile_member_id
            elif kind == "action_profile_group_id":
                if action.action_profile_group_id not in prof.groups:
                    raise P4RuntimeError(NOT_FOUND, f"{name}: no group "
                                         f"{action.action_profile_group_id}")
                new.group_id = action.action_profile_group_id
            elif kind == "action_profile_action_set":
                raise P4RuntimeError(UNIMPLEMENTED, f"{name}: one-shot action sets are not "
                                     "supported; program members and groups")
            else:
                raise _bad(f"{name}: an action profile table takes a member or group id")
        else:
            if kind != "action":
                raise _bad(f"{name}: a direct table takes an action")
            new.action = self._decode_action(action.action, self._allowed(t, False), name)

    @staticmethod
    def _canonical_entry(stored):
        """Read returns canonical bytestrings, whatever padding the writer used."""
        for fm in stored.match:
            kind = fm.WhichOneof("field_match_type")
            sub = getattr(fm, kind)
            sub.value = encode_bytes(int.from_bytes(sub.value, "big"))
        if stored.action.HasField("action"):
            for p in stored.action.action.params:
                p.value = encode_bytes(int.from_bytes(p.value, "big"))

    def _link(self, t, e):
        t.entries[(e.key, e.priority)] = e
        if t.kinds and t.kinds[0] == p4info_pb2.MatchField.LPM:
            value, plen = e.key[0]
            t.lpm.setdefault(plen, {})[value] = e

    def _unlink(self, t, e):
        del t.entries[(e.key, e.priority)]
        if t.kinds and t.kinds[0] == p4info_pb2.MatchField.LPM:
            value, plen = e.key[0]
            del t.lpm[plen][value]
            if not t.lpm[plen]:
                del t.lpm[plen]

    def _write_default(self, t, op, entry):
        name = t.info.preamble.name
        if op != MODIFY:
            raise _bad(f"{name}: the default entry can only be modified")
        if entry.match:
            raise _bad(f"{name}: a default entry has no match fields")
        if t.info.const_default_action_id:
            raise P4RuntimeError(PERMISSION_DENIED, f"{name}: the default action is const")
        if t.profile_id:
            raise P4RuntimeError(UNIMPLEMENTED, f"{name}: default entries of action profile "
                                 "tables are not supported")
        old = t.default
        if entry.HasField("action"):
            t.default = self._decode_action(entry.action.action, self._allowed(t, True), name)
        else:                       # reset to the program's default
            t.default = self._action_of(self.action_ids["NoAction"])
        return lambda: setattr(t, "default", old)

    def _profile(self, profile_id):
        p = self.profiles.get(profile_id)
        if p is None:
            raise P4RuntimeError(NOT_FOUND, f"action profile id {profile_id} is not in the P4Info")
        return p

    def _write_member(self, op, member):
        prof = self._profile(member.action_profile_id)
        name = prof.info.preamble.name
        mid = member.member_id
        old = prof.members.get(mid)
        _check_presence(op, old, f"{name}: member {mid}")
        if op == DELETE:
            if any(mid == m for _, ms in prof.groups.values() for m, _ in ms):
                raise P4RuntimeError(FAILED_PRECONDITION, f"{name}: member {mid} is in a group")
            if any(e.member_id == mid for tid in prof.tables for e in self.tables[tid].entries.values()):
                raise P4RuntimeError(FAILED_PRECONDITION,
                                     f"{name}: member {mid} is used by a table entry")
            del prof.members[mid]
            return lambda: prof.members.__setitem__(mid, old)
        if op == INSERT and len(prof.members) >= prof.info.size:
            raise P4RuntimeError(RESOURCE_EXHAUSTED, f"{name}: {prof.info.size} members")
        allowed = set()
        for tid in prof.tables:
            allowed |= self._allowed(self.tables[tid], False)
        action = self._decode_action(member.action, allowed, f"{name} member {mid}")
        prof.members[mid] = action
        self._refresh_slots(prof)
        if old is None:
            return lambda: (prof.members.pop(mid), self._refresh_slots(prof))
        return lambda: (prof.members.__setitem__(mid, old), self._refresh_slots(prof))

    def _write_group(self, op, group):
        prof = self._profile(group.action_profile_id)
        name = prof.info.preamble.name
        gid = group.group_id
        old = prof.groups.get(gid)
        _check_presence(op, old, f"{name}: group {gid}")
        if op == DELETE:
            if any(e.group_id == gid for tid in prof.tables for e in self.tables[tid].entries.values()):
                raise P4RuntimeError(FAILED_PRECONDITION,
                                     f"{name}: group {gid} is used by a table entry")
            del prof.groups[gid]
            self._refresh_slots(prof)
            return lambda: (prof.groups.__setitem__(gid, old), self._refresh_slots(prof))
        if op == MODIFY and group.max_size != old[0]:
            raise _bad(f"{name}: group {gid}: max_size {group.max_size} differs from the "
                       f"inserted {old[0]}")
        members, seen = [], set()
        for m in group.members:
            if m.member_id in seen:
                raise P4RuntimeError(ALREADY_EXISTS, f"{name}: group {gid}: member "
                                     f"{m.member_id} given twice")
            seen.add(m.member_id)
            if m.member_id not in prof.members:
                raise P4RuntimeError(NOT_FOUND, f"{name}: group {gid}: no member {m.member_id}")
            if m.weight < 1:
                raise _bad(f"{name}: group {gid}: member {m.member_id} weight {m.weight} "
                           "(at least 1; leave a member out for no traffic)")
            members.append((m.member_id, m.weight))
        total = sum(w for _, w in members)
        if group.max_size and total > group.max_size:
            raise P4RuntimeError(RESOURCE_EXHAUSTED, f"{name}: group {gid}: {total} weight "
                                 f"units over its max_size {group.max_size}")
        prof.groups[gid] = (group.max_size, members)
        self._refresh_slots(prof)
        if old is None:
            return lambda: (prof.groups.pop(gid), self._refresh_slots(prof))
        return lambda: (prof.groups.__setitem__(gid, old), self._refresh_slots(prof))

    @staticmethod
    def _refresh_slots(prof):
        """The selector picks slot hash % len(slots): members in ascending member id
        order, each repeated weight times (see p4/README.md, "member order")."""
        prof.slots = {gid: [prof.members[m] for m, w in sorted(ms) for _ in range(w)]
                      for gid, (_, ms) in prof.groups.items()}

    def _indexes(self, entry, size, name):
        if entry.HasField("index"):
            i = entry.index.index
            if not 0 <= i < size:
                raise _bad(f"{name}: index {i} out of range 0..{size - 1}")
            return [i]
        return list(range(size))

    def _write_counter(self, op, entry):
        info = self.counters.get(entry.counter_id)
        if info is None:
            raise P4RuntimeError(NOT_FOUND, f"counter id {entry.counter_id} is not in the P4Info")
        if op != MODIFY:
            raise _bad(f"{info.preamble.name}: counter entries can only be modified")
        data = self.counter_data[entry.counter_id]
        idx = self._indexes(entry, info.size, info.preamble.name)
        old = [list(data[i]) for i in idx]
        for i in idx:
            data[i] = [entry.data.byte_count, entry.data.packet_count]
        return lambda: [data.__setitem__(i, o) for i, o in zip(idx, old)]

    def _write_direct_counter(self, op, entry):
        if op != MODIFY:
            raise _bad("direct counter entries can only be modified")
        t = self._table(entry.table_entry.table_id)
        e = t.entries.get((self._decode_key(t, entry.table_entry), entry.table_entry.priority))
        if e is None or not t.has_direct_counter:
            raise P4RuntimeError(NOT_FOUND, f"{t.info.preamble.name}: no such entry with a "
                                 "direct counter")
        old = (e.packets, e.bytes)
        e.packets, e.bytes = entry.data.packet_count, entry.data.byte_count
        return lambda: (setattr(e, "packets", old[0]), setattr(e, "bytes", old[1]))

    def _write_register(self, op, entry):
        info = self.registers.get(entry.register_id)
        if info is None:
            raise P4RuntimeError(NOT_FOUND, f"register id {entry.register_id} is not in the P4Info")
        name = info.preamble.name
        if op != MODIFY:
            raise _bad(f"{name}: register entries can only be modified")
        if entry.data.WhichOneof("data") != "bitstring":
            raise _bad(f"{name}: data must be a bitstring")
        width = info.type_spec.bitstring.bit.bitwidth
        value = decode_bytes(entry.data.bitstring, width, name)
        data = self.register_data[entry.register_id]
        idx = self._indexes(entry, info.size, name)
        old = [data[i] for i in idx]
        for i in idx:
            data[i] = value
        return lambda: [data.__setitem__(i, o) for i, o in zip(idx, old)]

    # ------------------------------------------------------------ pipeline view
    def table(self, name):
        return self.tables[self.table_ids[name]]

    def lookup_exact(self, t, key):
        """The entry whose exact key is `key` (a tuple of ints), or None."""
        return t.entries.get((key, 0))

    def lookup_lpm(self, t, value, width=32):
        for plen in sorted(t.lpm, reverse=True):
            e = t.lpm[plen].get(value & ~((1 << (width - plen)) - 1) & ((1 << width) - 1))
            if e is not None:
                return e
        return None

    def selector_action(self, t, entry, hash_value):
        """The action an action-selector entry runs for a hash, or None when its group
        is empty (BMv2 then runs no action)."""
        prof = self.profiles[t.profile_id]
        if entry.member_id is not None:
            return prof.members[entry.member_id]
        slots = prof.slots.get(entry.group_id)
        if not slots:
            return None
        return slots[hash_value % len(slots)]

    def count(self, name, index, nbytes):
        """counter.count(index); an index past the counter's size counts nothing (BMv2
        logs an error and goes on)."""
        cid = self.counter_ids[name]
        cells = self.counter_data[cid]
        if index >= len(cells):
            return
        cell = cells[index]
        if self.counters[cid].spec.unit != p4info_pb2.CounterSpec.PACKETS:
            cell[0] += nbytes
        cell[1] += 1

    def register(self, name):
        return self.register_data[self.register_ids[name]]
