"""The Read side of the P4Runtime switch state: the entities a Read request's entity
matches, with the specification's wildcards (an unset id or index means all)."""
import os

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
from p4.v1 import p4runtime_pb2  # noqa: E402
from p4rt_errors import NOT_FOUND, UNIMPLEMENTED, P4RuntimeError, encode_bytes  # noqa: E402


class StateReader:
    """Mixed into SwitchState: reads its tables, profiles, counters and registers."""

    def read(self, entity):
        """The entities matching a Read request's entity (wildcards as the spec says)."""
        which = entity.WhichOneof("entity")
        reader = {"table_entry": self._read_table, "action_profile_member": self._read_members,
                  "action_profile_group": self._read_groups, "counter_entry": self._read_counter,
                  "direct_counter_entry": self._read_direct_counter,
                  "register_entry": self._read_register}.get(which)
        if reader is None:
            raise P4RuntimeError(UNIMPLEMENTED, f"reading {which} is not supported")
        return list(reader(getattr(entity, which)))

    def _read_table(self, want):
        tables = [self._table(want.table_id)] if want.table_id else list(self.tables.values())
        for t in tables:
            if want.is_default_action:
                out = p4runtime_pb2.Entity()
                out.table_entry.table_id = t.info.preamble.id
                out.table_entry.is_default_action = True
                if t.default is not None:
                    self._fill_action(out.table_entry.action.action, t.default)
                yield out
                continue
            key = self._decode_key(t, want) if want.match else None
            for e in t.entries.values():
                if key is not None and (e.key, e.priority) != (key, want.priority):
                    continue
                out = p4runtime_pb2.Entity()
                out.table_entry.CopyFrom(e.proto)
                if want.HasField("counter_data") and t.has_direct_counter:
                    out.table_entry.counter_data.packet_count = e.packets
                    out.table_entry.counter_data.byte_count = e.bytes
                yield out

    def _fill_action(self, msg, action):
        msg.action_id = action.id
        info = self.actions[action.id]
        for p in info.params:
            msg.params.add(param_id=p.id, value=encode_bytes(action.params[p.name]))

    def _profiles_read(self, want):
        if want.action_profile_id:
            return [self._profile(want.action_profile_id)]
        return list(self.profiles.values())

    def _read_members(self, want):
        for prof in self._profiles_read(want):
            for mid, action in sorted(prof.members.items()):
                if want.member_id and want.member_id != mid:
                    continue
                out = p4runtime_pb2.Entity()
                m = out.action_profile_member
                m.action_profile_id, m.member_id = prof.info.preamble.id, mid
                self._fill_action(m.action, action)
                yield out

    def _read_groups(self, want):
        for prof in self._profiles_read(want):
            for gid, (max_size, members) in sorted(prof.groups.items()):
                if want.group_id and want.group_id != gid:
                    continue
                out = p4runtime_pb2.Entity()
                g = out.action_profile_group
                g.action_profile_id, g.group_id, g.max_size = prof.info.preamble.id, gid, max_size
                for mid, weight in members:
                    g.members.add(member_id=mid, weight=weight)
                yield out

    def _cells(self, want, want_id, infos, kind):
        """(id, info, index) of every cell an indexed read asks for (id 0: all of them)."""
        for oid in ([want_id] if want_id else list(infos)):
            info = infos.get(oid)
            if info is None:
                raise P4RuntimeError(NOT_FOUND, f"{kind} id {oid} is not in the P4Info")
            for i in self._indexes(want, info.size, info.preamble.name):
                yield oid, info, i

    def _read_counter(self, want):
        for cid, _, i in self._cells(want, want.counter_id, self.counters, "counter"):
            out = p4runtime_pb2.Entity()
            c = out.counter_entry
            c.counter_id = cid
            c.index.index = i
            c.data.byte_count, c.data.packet_count = self.counter_data[cid][i]
            yield out

    def _read_direct_counter(self, want):
        t = self._table(want.table_entry.table_id)
        key = self._decode_key(t, want.table_entry) if want.table_entry.match else None
        for e in t.entries.values():
            if key is not None and (e.key, e.priority) != (key, want.table_entry.priority):
                continue
            out = p4runtime_pb2.Entity()
            d = out.direct_counter_entry
            d.table_entry.CopyFrom(e.proto)
            d.data.packet_count, d.data.byte_count = e.packets, e.bytes
            yield out

    def _read_register(self, want):
        for rid, _, i in self._cells(want, want.register_id, self.registers, "register"):
            out = p4runtime_pb2.Entity()
            r = out.register_entry
            r.register_id = rid
            r.index.index = i
            r.data.bitstring = encode_bytes(self.register_data[rid][i])
            yield out

