"""Yoda-style L7 rules for a Prism VIP: which backend serves a request.

A rule document (JSON; the controller pushes it with PUT /rules, a file gives it
at start) names the backends and lists rules:

    {"backends": {"b1": {"address": "10.77.3.2", "controlPort": 9500}, ...},
     "rules": [
        {"name": "jpg", "priority": 3, "match": {"url": "*.jpg"},
         "split": {"b2": 1, "b3": 1}},
        {"name": "css", "priority": 3, "match": {"url": "*.css"}, "split": {"b1": 1}},
        {"name": "css-backup", "priority": 2, "match": {"url": "*.css"},
         "split": {"b3": 1, "b4": 1}},
        {"name": "session", "priority": 1, "match": {"cookie": {"sid": "*"}},
         "split": {"b1": 1, "b2": 1}, "sticky": "sid"},
        {"name": "rest", "priority": 0, "match": {}, "split": {"b1": 1, "b2": 1},
         "balance": "least-loaded"}]}

Semantics (Yoda, EuroSys 2016, section 5.1 and Table 3):
- Rules are tried by decreasing priority (the document's order among equals).
  The first rule whose match holds and that has a live backend in its split
  serves the request; a rule whose backends are all down is skipped, so a lower
  priority rule with the same match is its backup.
- match: every field given must hold; {} matches everything.  `url`: a glob on
  the request path (without the query); `host`: a glob on the Host header
  (case-insensitive, port removed); `method`: exact; `header`: {name: glob}, the
  header must be present; `cookie`: {name: glob}, the cookie must be present.
- split: backend -> weight (> 0).  `balance`: "round-robin" (weighted, smooth:
  shares follow the weights exactly) or "least-loaded" (fewest connections held,
  Yoda's weight -1; ties by weight).
- sticky: a cookie name.  A request carrying it goes to the backend that served
  that cookie value before, while that backend is live and in the split;
  otherwise the balance picks one and the value is remembered (bounded LRU).

validate() refuses a bad document with an error naming the field."""
import collections
import fnmatch
import functools
import http.cookies
import ipaddress
import urllib.parse

BALANCES = ("round-robin", "least-loaded")
MATCH_FIELDS = ("url", "host", "method", "header", "cookie")
RULE_FIELDS = ("name", "priority", "match", "split", "balance", "sticky")
BACKEND_FIELDS = ("address", "controlPort")
STICKY_TABLE_SIZE = 100000
MAX_RULES = 10000


class RuleError(ValueError):
    """A rule document that cannot be used; the message names the field."""


def _require(cond, path, reason):
    if not cond:
        raise RuleError(f"{path}: {reason}")


def _known(obj, fields, path):
    _require(isinstance(obj, dict), path, f"expected an object, got {type(obj).__name__}")
    for k in obj:
        _require(k in fields, f"{path}.{k}", f"unknown field (expected one of {', '.join(fields)})")


def _glob_map(value, path):
    _require(isinstance(value, dict) and value, path, "expected a non-empty object name -> glob")
    out = {}
    for name, glob in value.items():
        _require(isinstance(glob, str), f"{path}.{name}", "expected a string glob")
        _require(name.strip() != "", path, "empty name")
        out[name] = glob
    return out


class Backend:
    """A backend as the rules see it; the front end fills in liveness and load."""

    def __init__(self, name, address, control_port):
        self.name = name
        self.address = address
        self.control_port = control_port
        self.link = None     # the front end's control connection to it (up, owned)

    @property
    def up(self):
        return self.link is not None and self.link.up

    @property
    def owned(self):
        """Connections this backend holds now."""
        return self.link.owned if self.link is not None else 0

    def as_json(self):
        return {"address": self.address, "controlPort": self.control_port}


class Match:
    def __init__(self, doc, path):
        _known(doc, MATCH_FIELDS, path)
        self.url = doc.get("url")
        self.host = doc.get("host")
        self.method = doc.get("method")
        for f in ("url", "host", "method"):
            v = doc.get(f)
            _require(v is None or (isinstance(v, str) and v), f"{path}.{f}",
                     "expected a non-empty string")
        self.header = {k.lower(): v for k, v in
                       _glob_map(doc["header"], f"{path}.header").items()} if "header" in doc else {}
        self.cookie = _glob_map(doc["cookie"], f"{path}.cookie") if "cookie" in doc else {}

    def holds(self, req):
        if self.method is not None and req.method != self.method:
            return False
        if self.url is not None and not fnmatch.fnmatchcase(req.path, self.url):
            return False
        if self.host is not None and not fnmatch.fnmatchcase(req.host, self.host.lower()):
            return False
        for name, glob in self.header.items():
            v = req.headers.get(name)
            if v is None or not fnmatch.fnmatchcase(v, glob):
                return False
        for name, glob in self.cookie.items():
            v = req.cookies.get(name)
            if v is None or not fnmatch.fnmatchcase(v, glob):
                return False
        return True


class Rule:
    def __init__(self, doc, path, backends):
        _known(doc, RULE_FIELDS, path)
        for f in ("name", "priority", "split"):
            _require(f in doc, f"{path}.{f}", "required")
        self.name = doc["name"]
        _require(isinstance(self.name, str) and self.name, f"{path}.name",
                 "expected a non-empty string")
        self.priority = doc["priority"]
        _require(isinstance(self.priority, int) and not isinstance(self.priority, bool),
                 f"{path}.priority", f"expected an integer, got {self.priority!r}")
        self.match = Match(doc.get("match", {}), f"{path}.match")
        split = doc["split"]
        _require(isinstance(split, dict) and split, f"{path}.split",
                 "expected a non-empty object backend -> weight")
        self.split = []
        for name, w in split.items():
            _require(name in backends, f"{path}.split.{name}", f"unknown backend {name!r}")
            _require(isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0,
                     f"{path}.split.{name}", f"expected a weight > 0, got {w!r}")
            self.split.append((backends[name], float(w)))
        self.balance = doc.get("balance", "round-robin")
        _require(self.balance in BALANCES, f"{path}.balance",
                 f"expected one of {', '.join(BALANCES)}, got {self.balance!r}")
        self.sticky = doc.get("sticky")
        _require(self.sticky is None or (isinstance(self.sticky, str) and self.sticky),
                 f"{path}.sticky", "expected a cookie name")
        self.current = {b.name: 0.0 for b, _ in self.split}   # smooth weighted round robin
        self.remembered = collections.OrderedDict()            # sticky value -> backend name

    def live(self):
        return [(b, w) for b, w in self.split if b.up]

    def pick(self, req):
        live = self.live()
        if not live:
            return None
        if self.sticky:
            value = req.cookies.get(self.sticky)
            name = self.remembered.get(value) if value is not None else None
            for b, _ in live:
                if b.name == name:
                    self.remembered.move_to_end(value)
                    return b
        if self.balance == "least-loaded":
            chosen = min(live, key=lambda bw: (bw[0].owned, -bw[1]))[0]
        else:
            total = sum(w for _, w in live)
            for b, w in live:
                self.current[b.name] += w
            chosen = max(live, key=lambda bw: self.current[bw[0].name])[0]
            self.current[chosen.name] -= total
        if self.sticky and req.cookies.get(self.sticky) is not None:
            self.remembered[req.cookies[self.sticky]] = chosen.name
            if len(self.remembered) > STICKY_TABLE_SIZE:
                self.remembered.popitem(last=False)
        return chosen


class Request:
    """What the rules look at, from a parsed request head (request.py)."""

    def __init__(self, method, target, headers):
        self.method = method
        if target.startswith("/"):   # origin-form (RFC 9112 section 3.2.1): nearly every request
            self.path = target.partition("?")[0]
        else:                        # absolute-form, asterisk-form
            self.path = urllib.parse.urlsplit(target).path or "/"
        self.headers = {}
        for name, value in headers:
            self.headers.setdefault(name.lower(), value)
        host = self.headers.get("host", "")
        self.host = host.rsplit(":", 1)[0].lower() if not host.startswith("[") else host.lower()

    @functools.cached_property
    def cookies(self):
        """Parsed only for the rules that look at cookies (it is the costly part)."""
        jar = http.cookies.SimpleCookie()
        try:
            jar.load(self.headers.get("cookie", ""))
        except http.cookies.CookieError:
            pass   # a malformed Cookie header matches no cookie rule
        return {k: m.value for k, m in jar.items()}


class RuleSet:
    """A validated rule document."""

    def __init__(self, doc):
        _known(doc, ("backends", "rules"), "document")
        _require("backends" in doc, "backends", "required")
        _require("rules" in doc, "rules", "required")
        bdoc = doc["backends"]
        _require(isinstance(bdoc, dict) and bdoc, "backends", "expected a non-empty object")
        self.backends = {}
        seen = set()
        for name, b in bdoc.items():
            path = f"backends.{name}"
            _known(b, BACKEND_FIELDS, path)
            for f in BACKEND_FIELDS:
                _require(f in b, f"{path}.{f}", "required")
            try:
                addr = str(ipaddress.IPv4Address(b["address"]))
            except (ValueError, TypeError):
                raise RuleError(f"{path}.address: not an IPv4 address: {b['address']!r}") from None
            port = b["controlPort"]
            _require(isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536,
                     f"{path}.controlPort", f"expected 1..65535, got {port!r}")
            _require((addr, port) not in seen, path, f"{addr}:{port} is listed twice")
            seen.add((addr, port))
            self.backends[name] = Backend(name, addr, port)
        rdoc = doc["rules"]
        _require(isinstance(rdoc, list) and rdoc, "rules", "expected a non-empty list")
        _require(len(rdoc) <= MAX_RULES, "rules", f"at most {MAX_RULES} rules")
        rules = [Rule(r, f"rules[{i}]", self.backends) for i, r in enumerate(rdoc)]
        names = set()
        for i, r in enumerate(rules):
            _require(r.name not in names, f"rules[{i}].name", f"duplicate rule name {r.name!r}")
            names.add(r.name)
        self.doc = doc
        # Stable sort: equal priorities keep the document's order.
        self.rules = sorted(rules, key=lambda r: -r.priority)

    def choose(self, req):
        """(rule, backend) for the request, or (None, None) when nothing can serve it."""
        for rule in self.rules:
            if rule.match.holds(req):
                b = rule.pick(req)
                if b is not None:
                    return rule, b
        return None, None


def validate(doc):
    """A RuleSet, or RuleError naming the field."""
    return RuleSet(doc)
