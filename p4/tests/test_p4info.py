#!/usr/bin/env python3
"""The P4Info files and the generated constants cannot drift from the P4 source.

Every table (match fields: names, ids, bit widths, match kinds; action refs and their
scopes; size; action profile; direct counter), action (params: names, ids, widths),
action profile, counter, direct counter and register of each profile of
p4/src/v1model/hlb.p4 is checked against the committed P4Info, ids by p4c's rule."""
import os
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import unittest

import hlb_testbed  # noqa: F401  (sets the paths of p4info_gen and p4src)
import p4info_gen
import p4src
from p4.config.v1 import p4info_pb2

P4IDS = p4info_pb2.P4Ids
KINDS = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
         "ternary": p4info_pb2.MatchField.TERNARY}


def p4c_id(prefix, name):
    """The id p4c gives a name without a collision; the hash itself is checked against
    p4c's NoAction id below."""
    return prefix << 24 | (p4info_gen.jenkins_one_at_a_time(name.encode()) & 0xFFFFFF)


def compare(prog, info):
    """Every difference between a parsed program and a P4Info, as messages."""
    errors = []
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}
    ids = {}
    for kind, items in ((P4IDS.TABLE, info.tables), (P4IDS.ACTION, info.actions),
                        (P4IDS.ACTION_PROFILE, info.action_profiles), (P4IDS.COUNTER, info.counters),
                        (P4IDS.DIRECT_COUNTER, info.direct_counters), (P4IDS.REGISTER, info.registers)):
        for x in items:
            ids[x.preamble.name] = x.preamble.id
            if x.preamble.id != p4c_id(kind, x.preamble.name):
                errors.append(f"{x.preamble.name}: id {x.preamble.id:#x}, p4c's rule gives "
                              f"{p4c_id(kind, x.preamble.name):#x}")
    if len(set(ids.values())) != len(ids):
        errors.append("duplicate ids")
    src_tables = {t.name: t for t in prog.tables}
    for extra in set(tables) - set(src_tables):
        errors.append(f"table {extra} is in the P4Info, not in the source")
    for name, t in src_tables.items():
        pt = tables.get(name)
        if pt is None:
            errors.append(f"table {name} is missing from the P4Info")
            continue
        got = [(mf.id, mf.name, mf.bitwidth, mf.match_type) for mf in pt.match_fields]
        want = [(i, n, w, KINDS[k]) for i, (n, w, k) in enumerate(t.keys, 1)]
        if got != want:
            errors.append(f"table {name}: match fields {got} in the P4Info, {want} in the source")
        got = [(r.id, r.scope) for r in pt.action_refs]
        want = [(ids.get(a), p4info_gen.SCOPES[s]) for a, s in t.action_refs]
        if got != want:
            errors.append(f"table {name}: action refs {got}, source {want}")
        if pt.size != t.size:
            errors.append(f"table {name}: size {pt.size}, source {t.size}")
        if pt.implementation_id != (ids.get(t.implementation) if t.implementation else 0):
            errors.append(f"table {name}: implementation id {pt.implementation_id}")
        if list(pt.direct_resource_ids) != ([ids.get(t.direct_counter)] if t.direct_counter else []):
            errors.append(f"table {name}: direct resources {list(pt.direct_resource_ids)}")
        if pt.const_default_action_id != (ids.get(t.const_default_action) if t.const_default_action else 0):
            errors.append(f"table {name}: const default action {pt.const_default_action_id}")
    for extra in set(actions) - set(prog.actions):
        errors.append(f"action {extra} is in the P4Info, not used by a table of the source")
    for name, a in prog.actions.items():
        pa = actions.get(name)
        if pa is None:
            errors.append(f"action {name} is missing from the P4Info")
            continue
        got = [(p.id, p.name, p.bitwidth) for p in pa.params]
        want = [(i, n, w) for i, (n, w) in enumerate(a.params, 1)]
        if got != want:
            errors.append(f"action {name}: params {got} in the P4Info, {want} in the source")
    checks = (
        (prog.action_profiles, info.action_profiles,
         lambda s, p: (p.size, p.with_selector, sorted(p.table_ids))
         == (s["size"], True, sorted(ids.get(t) for t in s["tables"]))),
        (prog.counters, info.counters,
         lambda s, p: (p.size, p4info_pb2.CounterSpec.Unit.Name(p.spec.unit)) == (s["size"], s["unit"])),
        (prog.direct_counters, info.direct_counters,
         lambda s, p: (p.direct_table_id, p4info_pb2.CounterSpec.Unit.Name(p.spec.unit))
         == (ids.get(s["table"]), s["unit"])),
        (prog.registers, info.registers,
         lambda s, p: (p.size, p.type_spec.bitstring.bit.bitwidth) == (s["size"], s["bitwidth"])),
    )
    for src_items, p4_items, same in checks:
        by_name = {x.preamble.name: x for x in p4_items}
        for extra in set(by_name) - {s["name"] for s in src_items}:
            errors.append(f"{extra} is in the P4Info, not in the source")
        for s in src_items:
            p = by_name.get(s["name"])
            if p is None:
                errors.append(f"{s['name']} is missing from the P4Info")
            elif not same(s, p):
                errors.append(f"{s['name']}: P4Info {str(p).strip()!r} differs from the source {s}")
    return errors


class P4InfoTest(unittest.TestCase):
    def test_every_object_of_the_source_is_in_the_p4info(self):
        for profile in p4src.load_profiles():
            with self.subTest(profile=profile):
                errors = compare(p4src.parse_program(profile), p4info_gen.load_p4info(profile))
                self.assertEqual(errors, [])

    def test_profiles_differ_as_their_defines_say(self):
        names = {p: {t.preamble.name for t in p4info_gen.load_p4info(p).tables}
                 for p in p4src.load_profiles()}
        self.assertNotIn("HlbIngress.cheetah.all_servers", names["hlb_hmux"])
        self.assertIn("HlbIngress.cheetah.all_servers", names["hlb_cheetah"])
        regs = {r.preamble.name for r in p4info_gen.load_p4info("hlb_cheetah_stateful").registers}
        self.assertIn("HlbIngress.cheetah.conn_stack", regs)
        self.assertFalse(p4info_gen.load_p4info("hlb_cheetah").registers)

    def test_generated_files_are_up_to_date(self):
        gen = os.path.join(p4src.P4_DIR, "tools", "p4info_gen.py")
        out = subprocess.run([sys.executable, gen, "--check"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)

    def test_noaction_has_the_id_every_p4c_program_gives_it(self):
        self.assertEqual(p4info_gen.assign_ids({P4IDS.ACTION: ["NoAction"]})[(P4IDS.ACTION, "NoAction")],
                         21257015)

    def test_collisions_probe_upwards_in_sorted_name_order(self):
        rng = random.Random(4)
        seen = {}
        while True:
            name = "".join(rng.choice(string.ascii_lowercase) for _ in range(10))
            h = p4c_id(P4IDS.TABLE, name)
            if h in seen and seen[h] != name:
                a, b = sorted([seen[h], name])
                break
            seen[h] = name
        ids = p4info_gen.assign_ids({P4IDS.TABLE: [b, a]})
        self.assertEqual(ids[(P4IDS.TABLE, a)], h)
        self.assertEqual(ids[(P4IDS.TABLE, b)], h + 1)

    def test_a_changed_source_is_caught(self):
        # Widen the DIP selector's service id in a copy of the source: the check names it.
        tmp = tempfile.mkdtemp(prefix="hlb-p4src-")
        try:
            shutil.copytree(p4src.SRC_DIR, os.path.join(tmp, "src"))
            header = os.path.join(tmp, "src", "shared", "define.p4")
            with open(header) as f:
                text = f.read()
            with open(header, "w") as f:
                f.write(re.sub(r"typedef bit<16> service_id_t;", "typedef bit<20> service_id_t;", text))
            prog = p4src.parse_program("hlb_hmux", top_level=os.path.join(tmp, "src", "v1model", "hlb.p4"))
            errors = compare(prog, p4info_gen.load_p4info("hlb_hmux"))
            self.assertTrue(any("HlbIngress.hmux.dip_select: match fields" in e for e in errors), errors)
            self.assertTrue(any("HlbIngress.hmux.set_service: params" in e for e in errors), errors)
        finally:
            shutil.rmtree(tmp)

    def test_reader_refuses_what_it_does_not_understand(self):
        with self.assertRaises(p4src.P4SourceError):
            p4src.Program("x", []).eval_int(["__import__", "(", ")"])
        with self.assertRaises(p4src.P4SourceError):
            p4src.parse_program(defines=["WITH_CHEETAH_STATEFUL"])      # #error in hlb.p4


if __name__ == "__main__":
    unittest.main()
