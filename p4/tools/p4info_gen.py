#!/usr/bin/env python3
"""Writes the P4Info of every profile of p4/src/v1model/hlb.p4 and the constants the
controller uses, all from the source (p4src.py reads it):

    p4/p4info/<profile>.p4info.txtpb         P4Info, text protobuf
    p4/model/hlb_p4info.py                   Python constants (names and ids)
    app/core/.../core/p4/HlbP4Info.java      Java constants (names and ids)

Ids follow p4c's rule: (P4Ids prefix << 24) | (Jenkins one-at-a-time hash of the fully
qualified name & 0xffffff), names of one kind taken in sorted order, linear probing on
a collision; aliases are the shortest unique suffix of the name among all symbols.

    python3 p4/tools/p4info_gen.py           # regenerate
    python3 p4/tools/p4info_gen.py --check   # exit 1 naming every stale file
"""
import argparse
import os
import sys

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
from google.protobuf import text_format  # noqa: E402
from p4.config.v1 import p4info_pb2  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p4src  # noqa: E402

REPO = os.path.dirname(p4src.P4_DIR)
P4INFO_DIR = os.path.join(p4src.P4_DIR, "p4info")
PY_CONSTANTS = os.path.join(p4src.P4_DIR, "model", "hlb_p4info.py")
JAVA_PACKAGE = "org.hybridlb.app.core.p4"
JAVA_CONSTANTS = os.path.join(REPO, "app", "core", "src", "main", "java",
                              *JAVA_PACKAGE.split("."), "HlbP4Info.java")

P4IDS = p4info_pb2.P4Ids
MATCH_TYPES = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
               "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
               "optional": p4info_pb2.MatchField.OPTIONAL}
SCOPES = {"TABLE_AND_DEFAULT": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
          "TABLE_ONLY": p4info_pb2.ActionRef.TABLE_ONLY,
          "DEFAULT_ONLY": p4info_pb2.ActionRef.DEFAULT_ONLY}
SCOPE_ANNOTATIONS = {"TABLE_ONLY": "@tableonly", "DEFAULT_ONLY": "@defaultonly"}
PREAMBLE_ANNOTATIONS = ("noWarn",)     # copied into the P4Info as p4c does
UNITS = {"PACKETS": p4info_pb2.CounterSpec.PACKETS, "BYTES": p4info_pb2.CounterSpec.BYTES,
         "BOTH": p4info_pb2.CounterSpec.BOTH}


def jenkins_one_at_a_time(data):
    h = 0
    for b in data:
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def assign_ids(names_by_prefix):
    """{prefix: [names]} -> {(prefix, name): id}, p4c's computeIdsForSymbols."""
    assigned, ids = set(), {}
    for prefix, names in names_by_prefix.items():
        for name in sorted(set(names), key=lambda n: n.encode()):
            value = jenkins_one_at_a_time(name.encode())
            start = value
            while (prefix << 24 | (value & 0xFFFFFF)) in assigned:
                value = (value + 1) & 0xFFFFFFFF
                if value == start:
                    raise ValueError(f"no P4Runtime id left for {name}")
            ids[(prefix, name)] = prefix << 24 | (value & 0xFFFFFF)
            assigned.add(ids[(prefix, name)])
    return ids


def aliases(names):
    """Shortest unique suffix (in dot-separated components) of every name."""
    counts = {}
    for name in set(names):
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            suffix = tuple(parts[-k:])
            counts[suffix] = counts.get(suffix, 0) + 1
    out = {}
    for name in names:
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            if counts[tuple(parts[-k:])] < 2 or k == len(parts):
                out[name] = ".".join(parts[-k:])
                break
    return out


def build_p4info(prog):
    names = {
        P4IDS.TABLE: [t.name for t in prog.tables],
        P4IDS.ACTION: list(prog.actions),
        P4IDS.ACTION_PROFILE: [p["name"] for p in prog.action_profiles],
        P4IDS.COUNTER: [c["name"] for c in prog.counters],
        P4IDS.DIRECT_COUNTER: [c["name"] for c in prog.direct_counters],
        P4IDS.REGISTER: [r["name"] for r in prog.registers],
    }
    ids = assign_ids(names)
    alias = aliases([n for ns in names.values() for n in ns])

    def preamble(msg, prefix, name):
        msg.preamble.id = ids[(prefix, name)]
        msg.preamble.name = name
        msg.preamble.alias = alias[name]

    info = p4info_pb2.P4Info()
    info.pkg_info.arch = p4src.V1MODEL_ARCH
    info.type_info.SetInParent()            # empty, as p4c writes it
    for t in prog.tables:
        table = info.tables.add()
        preamble(table, P4IDS.TABLE, t.name)
        for i, (fname, width, kind) in enumerate(t.keys, 1):
            mf = table.match_fields.add(id=i, name=fname, bitwidth=width)
            mf.match_type = MATCH_TYPES[kind]
        for aname, scope in t.action_refs:
            ref = table.action_refs.add(id=ids[(P4IDS.ACTION, aname)], scope=SCOPES[scope])
            if scope in SCOPE_ANNOTATIONS:
                ref.annotations.append(SCOPE_ANNOTATIONS[scope])
        if t.const_default_action:
            table.const_default_action_id = ids[(P4IDS.ACTION, t.const_default_action)]
        if t.implementation:
            table.implementation_id = ids[(P4IDS.ACTION_PROFILE, t.implementation)]
        if t.direct_counter:
            table.direct_resource_ids.append(ids[(P4IDS.DIRECT_COUNTER, t.direct_counter)])
        table.size = t.size
    for a in prog.actions.values():
        action = info.actions.add()
        preamble(action, P4IDS.ACTION, a.name)
        for key in PREAMBLE_ANNOTATIONS:
            if key in a.annotations:
                action.preamble.annotations.append(f"@{key}({a.annotations[key]})")
        for i, (pname, width) in enumerate(a.params, 1):
            action.params.add(id=i, name=pname, bitwidth=width)
    for p in prog.action_profiles:
        prof = info.action_profiles.add()
        preamble(prof, P4IDS.ACTION_PROFILE, p["name"])
        prof.table_ids.extend(ids[(P4IDS.TABLE, t)] for t in p["tables"])
        prof.with_selector = p["with_selector"]
        prof.size = p["size"]
    for c in prog.counters:
        counter = info.counters.add()
        preamble(counter, P4IDS.COUNTER, c["name"])
        counter.spec.unit = UNITS[c["unit"]]
        counter.size = c["size"]
    for c in prog.direct_counters:
        counter = info.direct_counters.add()
        preamble(counter, P4IDS.DIRECT_COUNTER, c["name"])
        counter.spec.unit = UNITS[c["unit"]]
        counter.direct_table_id = ids[(P4IDS.TABLE, c["table"])]
    for r in prog.registers:
        reg = info.registers.add()
        preamble(reg, P4IDS.REGISTER, r["name"])
        reg.type_spec.bitstring.bit.bitwidth = r["bitwidth"]
        reg.size = r["size"]
    return info


def p4info_path(profile):
    return os.path.join(P4INFO_DIR, f"{profile}.p4info.txtpb")


def p4info_text(info, profile):
    return (f"# P4Info of profile {profile} of p4/src/v1model/hlb.p4 "
            f"(defines in p4/profiles.json); written by p4/tools/p4info_gen.py\n"
            + text_format.MessageToString(info))


def load_p4info(profile):
    info = p4info_pb2.P4Info()
    with open(p4info_path(profile)) as f:
        text_format.Parse(f.read(), info)
    return info


# ------------------------------------------------------------------ constants
def _const_name(fq_name):
    """HlbIngress.hmux.dip_select -> HMUX_DIP_SELECT (the control prefix dropped)."""
    parts = fq_name.split(".")
    if len(parts) > 1 and parts[0] in ("HlbIngress", "HlbEgress"):
        parts = parts[1:]
    return "_".join(parts).upper()


def constant_entries(infos):
    """[(kind, CONST_NAME, value, comment)] over every profile (union).  A symbol in
    several profiles must have one id in all of them."""
    seen, out = {}, []

    def add(kind, cname, value, comment):
        key = (kind, cname)
        if key in seen:
            if seen[key] != value:
                raise ValueError(f"{cname}: {seen[key]} in one profile, {value} in another")
            return
        seen[key] = value
        out.append((kind, cname, value, comment))

    for profile, info in infos.items():
        for t in info.tables:
            c = _const_name(t.preamble.name)
            add("table", c, t.preamble.name, "table")
            add("id", c + "_ID", t.preamble.id, "")
            for mf in t.match_fields:
                add("field", f"{c}_{mf.name.upper()}", mf.name, f"match field {mf.id}, {mf.bitwidth} bits")
                add("number", f"{c}_{mf.name.upper()}_ID", mf.id, "")
                add("number", f"{c}_{mf.name.upper()}_BITS", mf.bitwidth, "")
        for a in info.actions:
            c = _const_name(a.preamble.name)
            add("action", c, a.preamble.name, "action")
            add("id", c + "_ID", a.preamble.id, "")
            for p in a.params:
                add("param", f"{c}_{p.name.upper()}", p.name, f"param {p.id}, {p.bitwidth} bits")
                add("number", f"{c}_{p.name.upper()}_ID", p.id, "")
                add("number", f"{c}_{p.name.upper()}_BITS", p.bitwidth, "")
        for kind, items in (("action profile", info.action_profiles), ("counter", info.counters),
                            ("direct counter", info.direct_counters), ("register", info.registers)):
            for x in items:
                c = _const_name(x.preamble.name)
                add(kind, c, x.preamble.name, kind)
                add("id", c + "_ID", x.preamble.id, "")
    return out


def profiles_of(infos):
    out = {}
    for profile, info in infos.items():
        for items in (info.tables, info.actions, info.action_profiles, info.counters,
                      info.direct_counters, info.registers):
            for x in items:
                out.setdefault(x.preamble.name, []).append(profile)
    return out


def python_constants(infos, consts):
    lines = ['"""Names and ids of the hybridlb P4 programs, from their P4Info',
             "(p4/p4info/*.p4info.txtpb).  Written by p4/tools/p4info_gen.py: do not edit.",
             '"""', "", f"PROFILES = {tuple(infos)!r}", ""]
    for kind, cname, value, comment in consts:
        v = (str(value) if kind in ("value", "number") else f"0x{value:08x}") if isinstance(value, int) \
            else repr(value)
        lines.append(f"{cname} = {v}" + (f"  # {comment}" if comment else ""))
    return "\n".join(lines) + "\n"


def java_constants(infos, consts):
    lines = ["package " + JAVA_PACKAGE + ";", "",
             "/**",
             " * Names and ids of the hybridlb P4 programs (profiles "
             + ", ".join(infos) + "), from their",
             " * P4Info (p4/p4info/*.p4info.txtpb). Written by p4/tools/p4info_gen.py: do not edit.",
             " */",
             "public final class HlbP4Info {", "",
             "    private HlbP4Info() {", "    }", ""]
    for profile in infos:
        lines.append(f'    public static final String PROFILE_{profile.upper()} = "{profile}";')
    lines.append("")
    for kind, cname, value, comment in consts:
        if comment:
            lines.append(f"    /** {comment}. */")
        if isinstance(value, int) and kind == "value":
            lines.append(f"    public static final long {cname} = {value}L;")
        elif kind == "number":
            lines.append(f"    public static final int {cname} = {value};")
        elif isinstance(value, int):
            lines.append(f"    public static final int {cname} = 0x{value:08x};")
        else:
            lines.append(f'    public static final String {cname} = "{value}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def source_constants(progs):
    """[(kind, NAME, value, comment)]: the program's `const` values (parameter encodings,
    counter indexes) and its size macros, which the P4Info does not carry."""
    out, seen = [], {}
    for prog in progs:
        values = dict(prog.constants)
        values.update({k: v for k, v in prog.macros.items()
                       if not k.startswith(("HLB_", "WITH_"))})
        for name, value in values.items():
            if seen.setdefault(name, value) != value:
                raise ValueError(f"{name}: {seen[name]} in one profile, {value} in another")
            if len([1 for _, n, _, _ in out if n == name]) == 0:
                out.append(("value", name, value, ""))
    return out


def generated_files():
    """{path: text} of every file this script writes."""
    progs = [p4src.parse_program(p) for p in p4src.load_profiles()]
    infos = {prog.profile: build_p4info(prog) for prog in progs}
    files = {p4info_path(p): p4info_text(info, p) for p, info in infos.items()}
    consts = constant_entries(infos) + source_constants(progs)
    files[PY_CONSTANTS] = python_constants(infos, consts)
    files[JAVA_CONSTANTS] = java_constants(infos, consts)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed files; exit 1 naming the stale ones")
    args = ap.parse_args()
    stale = []
    for path, text in generated_files().items():
        try:
            with open(path) as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if args.check:
            stale.append(os.path.relpath(path, REPO))
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("wrote", os.path.relpath(path, REPO))
    if stale:
        print("stale generated files (run python3 p4/tools/p4info_gen.py):", ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
