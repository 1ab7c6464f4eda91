"""Reads the hybridlb P4 programs (p4/src) into a declarative description: the
control-plane objects p4c would put in the P4Info (tables, match fields, actions and
their parameters, action profiles, counters, direct counters, registers) with their
fully qualified names and bit widths, and the program's constants.

This is not a P4 compiler.  It understands the subset of P4_16 the programs in p4/src
are written in (typedefs, headers, structs, constants, actions, tables, the v1model
externs, control instances) and refuses anything else it meets where it matters, so a
change to the source either stays readable here or fails the P4Info test loudly.
The preprocessor handles #include "...", object-like #define, #ifdef/#ifndef/#if
defined()/#else/#endif and #error; <core.p4> and <v1model.p4> are the compiler's and
are skipped (the v1model types used here are declared below).
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
P4_DIR = os.path.dirname(HERE)
SRC_DIR = os.path.join(P4_DIR, "src")
TOP_LEVEL = os.path.join(SRC_DIR, "v1model", "hlb.p4")
PROFILES_FILE = os.path.join(P4_DIR, "profiles.json")

# v1model's standard_metadata fields the programs read (v1model.p4).
V1MODEL_STANDARD_METADATA = {"ingress_port": 9, "egress_spec": 9, "egress_port": 9,
                             "instance_type": 32, "packet_length": 32,
                             "ingress_global_timestamp": 48, "checksum_error": 1}
V1MODEL_ARCH = "v1model"
DEFAULT_TABLE_SIZE = 1024          # p4c's size for a table without a size property


class P4SourceError(ValueError):
    pass


def load_profiles():
    with open(PROFILES_FILE) as f:
        return json.load(f)["profiles"]


# ------------------------------------------------------------------ preprocessor
def preprocess(path, defines):
    """Text of `path` with includes expanded, conditionals resolved and macros
    substituted; `defines` maps names to values (a WITH_* flag maps to "1")."""
    macros = dict(defines)
    out = []
    _preprocess_file(path, macros, out, set())
    text = "\n".join(out)
    return text, macros


def _eval_condition(expr, macros):
    expr = expr.strip()
    m = re.fullmatch(r"(!?)\s*defined\s*\(\s*(\w+)\s*\)", expr)
    parts = re.split(r"\s*&&\s*", expr)
    if len(parts) > 1:
        return all(_eval_condition(p, macros) for p in parts)
    if m:
        return (m.group(2) in macros) != (m.group(1) == "!")
    raise P4SourceError(f"#if expression not understood: {expr!r}")


def _preprocess_file(path, macros, out, seen_guarded):
    with open(path) as f:
        lines = f.read().split("\n")
    stack = []          # (active, taken) per open conditional
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        active = all(a for a, _ in stack)
        if line.startswith("#"):
            directive = line[1:].strip()
            word = directive.split(None, 1)[0] if directive else ""
            rest = directive[len(word):].strip()
            if word in ("ifdef", "ifndef"):
                cond = (rest in macros) == (word == "ifdef")
                stack.append((cond, cond))
            elif word == "if":
                cond = _eval_condition(rest, macros)
                stack.append((cond, cond))
            elif word == "else":
                _, taken = stack.pop()
                stack.append((not taken, True))
            elif word == "endif":
                stack.pop()
            elif not active:
                continue
            elif word == "define":
                name, _, value = rest.partition(" ")
                macros[name] = _strip_comment(value).strip() or "1"
            elif word == "include":
                if rest.startswith("<"):
                    continue                      # the compiler's core.p4 / v1model.p4
                inc = os.path.normpath(os.path.join(os.path.dirname(path), rest.strip('"')))
                _preprocess_file(inc, macros, out, seen_guarded)
            elif word == "error":
                raise P4SourceError(f"{path}:{lineno}: #error {rest}")
            else:
                raise P4SourceError(f"{path}:{lineno}: directive not understood: {line}")
            continue
        if active:
            out.append(_substitute(_strip_comment(raw), macros))
    if stack:
        raise P4SourceError(f"{path}: unterminated #if")


def _strip_comment(line):
    return line.split("//", 1)[0]


def _substitute(line, macros):
    for _ in range(8):                      # macros defined in terms of macros
        new = re.sub(r"\b[A-Z_][A-Z0-9_]*\b",
                     lambda m: macros.get(m.group(0), m.group(0)), line)
        if new == line:
            break
        line = new
    return line


# ------------------------------------------------------------------ tokens
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>\d+[ws]0[xX][0-9a-fA-F_]+|\d+[ws]\d+|0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d+)
  | (?P<str>"[^"]*")
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\+\+|&&&|&&|\|\||==|!=|<=|>=|\.\.|[{}()\[\]<>;:,.=@!~&|^+\-*/%?])
""", re.X)


def tokenize(text):
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise P4SourceError(f"unexpected character {text[pos]!r} near {text[pos:pos+40]!r}")
        pos = m.end()
        if m.lastgroup != "ws":
            toks.append(m.group(0))
    return toks


def parse_int(tok):
    tok = tok.replace("_", "")
    m = re.fullmatch(r"(\d+)[ws](.+)", tok)
    if m:
        tok = m.group(2)
    return int(tok, 0)


class Tokens:
    def __init__(self, toks):
        self.toks, self.i = toks, 0

    def peek(self, k=0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def next(self):
        t = self.peek()
        if t is None:
            raise P4SourceError("unexpected end of program")
        self.i += 1
        return t

    def expect(self, want):
        t = self.next()
        if t != want:
            raise P4SourceError(f"expected {want!r}, got {t!r} near "
                                f"{' '.join(self.toks[max(0, self.i - 8):self.i + 4])}")
        return t

    def skip_balanced(self, open_tok, close_tok):
        """Skips from an open token (current) to its matching close, returns the tokens
        strictly between."""
        self.expect(open_tok)
        depth, start = 1, self.i
        while depth:
            t = self.next()
            depth += (t == open_tok) - (t == close_tok)
        return self.toks[start:self.i - 1]

    def annotations(self):
        ann = {}
        while self.peek() == "@":
            self.next()
            name = self.next()
            if self.peek() == "(":
                body = self.skip_balanced("(", ")")
                ann[name] = " ".join(body)
            else:
                ann[name] = None
        return ann


# ------------------------------------------------------------------ program model
class Program:
    """What p4c's P4Info would hold for one profile of the program."""

    def __init__(self, profile, defines):
        self.profile = profile
        self.defines = defines
        self.typedefs = {}      # name -> width
        self.types = {}         # header/struct name -> {field: type token list}
        self.constants = {}     # const name -> int
        self.controls = {}      # control type name -> Control
        # core.p4's `@noWarn("unused") action NoAction() {}`
        self.actions_toplevel = {"NoAction": Action("NoAction", [], {"noWarn": '"unused"'})}
        self.main_args = []
        # results
        self.tables = []        # Table, fully qualified
        self.actions = {}       # fq name -> Action (those referenced by tables)
        self.action_profiles = []
        self.counters = []
        self.direct_counters = []
        self.registers = []

    def width(self, type_toks):
        """Bit width of a type given as tokens (bit<N>, a typedef, bool)."""
        if type_toks[0] == "bit":
            return self.eval_int(type_toks[2:-1])
        if type_toks == ["bool"]:
            return 1
        if len(type_toks) == 1 and type_toks[0] in self.typedefs:
            return self.typedefs[type_toks[0]]
        raise P4SourceError(f"type without a bit width: {' '.join(type_toks)}")

    def eval_int(self, toks):
        expr = " ".join(toks).replace("< <", "<<").replace("> >", ">>")
        for name, value in self.constants.items():
            expr = re.sub(rf"\b{name}\b", str(value), expr)
        expr = re.sub(r"\b\d+[ws](0[xX][0-9a-fA-F_]+|\d+)\b", r"\1", expr)
        if not re.fullmatch(r"[\d\sxXa-fA-F_()+\-*<>]+", expr):
            raise P4SourceError(f"not a constant integer expression: {expr!r}")
        return int(eval(expr, {"__builtins__": {}}))       # digits and operators only

    def field_width(self, scope, expr_toks):
        """Width of a key or argument expression such as hdr.ipv4.dst_addr, resolved
        through the control's parameters (scope: name -> type name)."""
        parts = [t for t in expr_toks if t != "."]
        if not parts or parts[0] not in scope:
            raise P4SourceError(f"key expression not understood: {''.join(expr_toks)}")
        if len(parts) == 2 and "[" in parts[1]:
            raise P4SourceError(f"slices in keys are not supported: {''.join(expr_toks)}")
        tname = scope[parts[0]]
        for part in parts[1:]:
            if tname == "standard_metadata_t":
                return V1MODEL_STANDARD_METADATA[part]
            fields = self.types.get(tname)
            if fields is None or part not in fields:
                raise P4SourceError(f"no field {part} in {tname} ({''.join(expr_toks)})")
            ftype = fields[part]
            if len(ftype) == 1 and ftype[0] in self.types:
                tname = ftype[0]
            else:
                return self.width(ftype)
        raise P4SourceError(f"key is a whole header or struct: {''.join(expr_toks)}")


class Action:
    def __init__(self, name, params, annotations):
        self.name, self.params, self.annotations = name, params, annotations


class Table:
    def __init__(self, name):
        self.name = name
        self.keys = []              # (name, width, match_kind)
        self.selector_keys = []     # expression texts of `selector` keys, in order
        self.action_refs = []       # (fq action name, scope)
        self.const_default_action = None
        self.default_action = None
        self.size = DEFAULT_TABLE_SIZE
        self.implementation = None  # fq action profile name
        self.direct_counter = None  # fq direct counter name
        self.local_actions = {}     # the actions of the control that declares it


class Control:
    def __init__(self, name, params, body):
        self.name, self.params, self.body = name, params, body


def parse_program(profile=None, defines=None, top_level=TOP_LEVEL):
    """The Program of one profile (name in p4/profiles.json) or of explicit defines."""
    if defines is None:
        defines = load_profiles()[profile]
    text, macros = preprocess(top_level, {d: "1" for d in defines})
    prog = Program(profile, list(defines))
    prog.macros = {k: int(v, 0) for k, v in macros.items() if re.fullmatch(r"\d+|0x[0-9a-fA-F]+", v)}
    ts = Tokens(tokenize(text))
    while ts.peek() is not None:
        _parse_toplevel(prog, ts)
    _elaborate(prog)
    return prog


def _parse_type(ts):
    t = [ts.next()]
    if ts.peek() == "<":
        t += ["<"] + ts.skip_balanced("<", ">") + [">"]
    return t


def _parse_toplevel(prog, ts):
    ann = ts.annotations()
    t = ts.next()
    if t == "typedef":
        ty = _parse_type(ts)
        prog.typedefs[ts.next()] = prog.width(ty)
        ts.expect(";")
    elif t in ("header", "struct"):
        name = ts.next()
        ts.expect("{")
        fields = {}
        while ts.peek() != "}":
            ty = _parse_type(ts)
            fields[ts.next()] = ty
            ts.expect(";")
        ts.expect("}")
        prog.types[name] = fields
    elif t == "const":
        _parse_type(ts)
        name = ts.next()
        ts.expect("=")
        expr = []
        while ts.peek() != ";":
            expr.append(ts.next())
        ts.expect(";")
        prog.constants[name] = prog.eval_int(expr)
    elif t in ("control", "parser"):
        name = ts.next()
        params = _parse_params(prog, ts.skip_balanced("(", ")"))
        body = ts.skip_balanced("{", "}")
        if t == "control":
            prog.controls[name] = Control(name, params, body)
    elif t == "action":
        name = ts.next()
        params = _parse_params(prog, ts.skip_balanced("(", ")"))
        ts.skip_balanced("{", "}")
        prog.actions_toplevel[name] = Action(name, params, ann)
    elif t == "V1Switch":
        args = ts.skip_balanced("(", ")")
        prog.main_args = [a for a, b in zip(args, args[1:] + [None]) if b == "("]
        ts.next()                   # instance name
        ts.expect(";")
    else:
        raise P4SourceError(f"top-level declaration not understood: {t}")


def _parse_params(prog, toks):
    """[(direction, type tokens, name)] of a parameter list."""
    params, cur = [], []
    for t in toks + [","]:
        if t == "," and cur:
            direction = cur[0] if cur[0] in ("in", "out", "inout") else ""
            body = cur[1:] if direction else cur
            params.append((direction, body[:-1], body[-1]))
            cur = []
        elif t != ",":
            cur.append(t)
    return params


# ------------------------------------------------------------------ controls
_EXTERNS = ("counter", "direct_counter", "register", "action_selector")
_COUNTER_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}


def _elaborate(prog):
    if len(prog.main_args) != 6:
        raise P4SourceError("V1Switch(...) main; with six blocks not found")
    for role in (2, 3):         # ingress, egress
        name = prog.main_args[role]
        _elaborate_control(prog, prog.controls[name], name)


def _elaborate_control(prog, control, prefix):
    scope = {name: ty[0] for _, ty, name in control.params}
    ts = Tokens(control.body)
    local_actions = {}
    while ts.peek() is not None and ts.peek() != "apply":
        ann = ts.annotations()
        t = ts.peek()
        if t == "action":
            ts.next()
            name = ts.next()
            params = _parse_params(prog, ts.skip_balanced("(", ")"))
            ts.skip_balanced("{", "}")
            local_actions[name] = Action(f"{prefix}.{name}", [
                (p, prog.width(ty)) for _, ty, p in params], ann)
        elif t == "table":
            ts.next()
            name = ts.next()
            _parse_table(prog, ts, f"{prefix}.{name}", scope, local_actions)
        elif t in _EXTERNS:
            _parse_extern(prog, ts, prefix)
        elif t in prog.controls and ts.peek(1) == "(":
            ctl_type = ts.next()
            ts.skip_balanced("(", ")")
            inst = ts.next()
            ts.expect(";")
            _elaborate_control(prog, prog.controls[ctl_type], f"{prefix}.{inst}")
        else:                   # a local variable: type name [= expr];
            while ts.next() != ";":
                pass
    # Actions the apply block calls directly are in the P4Info too, as p4c lists them:
    # without parameters (the call binds them).
    body = ts.toks[ts.i:]
    for k, tok in enumerate(body[:-1]):
        action = local_actions.get(tok)
        if action is not None and body[k + 1] == "(" and (k == 0 or body[k - 1] != "."):
            prog.actions.setdefault(action.name, Action(action.name, [], action.annotations))
    for table in prog.tables:
        if table.name.startswith(prefix + ".") and table.name.count(".") == prefix.count(".") + 1:
            _resolve_table_refs(prog, table, prefix)


def _parse_extern(prog, ts, prefix):
    kind = ts.next()
    type_arg = ts.skip_balanced("<", ">") if ts.peek() == "<" else None
    args = _split_args(ts.skip_balanced("(", ")"))
    name = f"{prefix}.{ts.next()}"
    ts.expect(";")
    if kind == "counter":
        prog.counters.append({"name": name, "size": prog.eval_int(args[0]),
                              "unit": _counter_unit(args[1])})
    elif kind == "direct_counter":
        prog.direct_counters.append({"name": name, "unit": _counter_unit(args[0]),
                                     "table": None})
    elif kind == "register":
        prog.registers.append({"name": name, "size": prog.eval_int(args[0]),
                               "bitwidth": prog.width(type_arg)})
    elif kind == "action_selector":
        prog.action_profiles.append({"name": name, "size": prog.eval_int(args[1]),
                                     "algorithm": args[0][-1],
                                     "output_width": prog.eval_int(args[2]),
                                     "with_selector": True, "tables": []})


def _counter_unit(toks):
    if toks[:2] != ["CounterType", "."] or toks[2] not in _COUNTER_UNITS:
        raise P4SourceError(f"counter type not understood: {''.join(toks)}")
    return _COUNTER_UNITS[toks[2]]


def _split_args(toks):
    args, cur, depth = [], [], 0
    for t in toks:
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        if t == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        args.append(cur)
    return args


def _parse_table(prog, ts, fq_name, scope, local_actions):
    table = Table(fq_name)
    ts.expect("{")
    while ts.peek() != "}":
        prop = ts.next()
        const = prop == "const"
        if const:
            prop = ts.next()
        if prop == "key":
            ts.expect("=")
            for entry in _split_statements(ts.skip_balanced("{", "}")):
                colon = entry.index(":")
                expr, rest = entry[:colon], entry[colon + 1:]
                kind = rest[0]
                ann = Tokens(rest[1:]).annotations()
                if kind == "selector":
                    table.selector_keys.append("".join(expr))
                    continue
                name = ann.get("name")
                name = name.strip('" ') if name else "".join(expr)
                table.keys.append((name, prog.field_width(scope, expr), kind))
        elif prop == "actions":
            ts.expect("=")
            for entry in _split_statements(ts.skip_balanced("{", "}")):
                sub = Tokens(entry)
                ann = sub.annotations()
                aname = sub.next()
                scope_kind = ("DEFAULT_ONLY" if "defaultonly" in ann else
                              "TABLE_ONLY" if "tableonly" in ann else "TABLE_AND_DEFAULT")
                table.action_refs.append((aname, scope_kind))
            table.local_actions = local_actions
        elif prop == "default_action":
            ts.expect("=")
            toks = []
            while ts.peek() != ";":
                toks.append(ts.next())
            ts.expect(";")
            table.default_action = toks[0]
            if const:
                table.const_default_action = toks[0]
        elif prop == "size":
            ts.expect("=")
            toks = []
            while ts.peek() != ";":
                toks.append(ts.next())
            ts.expect(";")
            table.size = prog.eval_int(toks)
        elif prop == "implementation":
            ts.expect("=")
            table.implementation = ts.next()
            ts.expect(";")
        elif prop == "counters":
            ts.expect("=")
            table.direct_counter = ts.next()
            ts.expect(";")
        else:
            raise P4SourceError(f"table {fq_name}: property {prop} not understood")
    ts.expect("}")
    if table.default_action is None and "NoAction" not in [a for a, _ in table.action_refs]:
        # A table without default_action defaults to NoAction, which p4c adds to it.
        table.action_refs.append(("NoAction", "DEFAULT_ONLY"))
    prog.tables.append(table)


def _split_statements(toks):
    out, cur = [], []
    for t in toks:
        if t == ";":
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        raise P4SourceError(f"missing ';' after {' '.join(cur)}")
    return out


def _resolve_table_refs(prog, table, prefix):
    local_actions = table.local_actions
    refs = []
    for aname, scope_kind in table.action_refs:
        action = local_actions.get(aname) or prog.actions_toplevel.get(aname)
        if action is None:
            raise P4SourceError(f"table {table.name}: unknown action {aname}")
        if action.name not in prog.actions:
            prog.actions[action.name] = action
        refs.append((action.name, scope_kind))
    table.action_refs = refs
    for attr in ("default_action", "const_default_action"):
        value = getattr(table, attr)
        if value is not None:
            action = local_actions.get(value) or prog.actions_toplevel.get(value)
            setattr(table, attr, action.name)
    if table.implementation:
        fq = f"{prefix}.{table.implementation}"
        prof = next((p for p in prog.action_profiles if p["name"] == fq), None)
        if prof is None:
            raise P4SourceError(f"table {table.name}: no action profile {fq}")
        prof["tables"].append(table.name)
        table.implementation = fq
    if table.direct_counter:
        fq = f"{prefix}.{table.direct_counter}"
        dc = next((c for c in prog.direct_counters if c["name"] == fq), None)
        if dc is None:
            raise P4SourceError(f"table {table.name}: no direct counter {fq}")
        dc["table"] = table.name
        table.direct_counter = fq
