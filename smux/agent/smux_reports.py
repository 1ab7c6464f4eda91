"""What the host agent tells the SMuxes (smux/README.md, Control API):

- close reports (POST /cheetah/closed): the sockops program reports each connection a
  stateful SMux hinted (p4/COOKIE-SPEC.md §7) when its socket reaches TCP_CLOSE; the
  loader prints it on its stdout; ClosedReporter sends it to the owner its ident names
  (bits 13-10, an index into the cookie configuration's statefulOwners), in batches,
  retrying with backoff. Under DSR the SMux never sees the server's FIN: without these
  reports its entries leave only by the idle sweep.
- load reports (POST /loads, ToN §IV-B): LoadReporter sends this DIP's load every period
  to every SMux of the configuration's smuxes: the machine's busy CPUs (CpuLoad) or the
  ESTABLISHED connections to this host's VIPs (ConnectionLoad), --load-metric.
- re-reports (POST /cheetah/adopt, COOKIE-SPEC §7 "Adoption"): OwnerWatch asks each owner
  for its boot id every period; when an owner id is held by another SMux than before, or
  its SMux restarted (its ConnTable is empty), it sends that SMux this host's open hinted
  connections of the id, with this host's server id, so that their entries come back.

Both read the SMux lists from the current cookie configuration at every send, so a
PUT /cookie takes effect at once.
"""
import collections
import ipaddress
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

BATCH = 256            # close reports per POST
QUEUE_MAX = 65536      # close reports waiting; beyond, the oldest are dropped (idle sweep frees them)
RETRY_FIRST, RETRY_MAX = 0.1, 5.0   # seconds of backoff after a failed POST, doubling
ATTEMPTS = 6           # POSTs of one batch before it is given up (about 10 s of backoff)
HTTP_TIMEOUT = 2.0


def owner_of(ident):
    """The owner id a stateful ident names (COOKIE-SPEC §7: 1 << 14 | owner << 10 | index)."""
    return (ident >> 10) & 0xF


def client_tls(cert, key, ca):
    """The context for https:// SMuxes: their certificates checked against ca, and this
    agent's client certificate (app/standalone/deploy/hlb-certs DIR client NAME: the SMux
    takes writes only from a certificate made for client use). None without options."""
    if not (cert or key or ca):
        return None
    ctx = ssl.create_default_context(cafile=ca)
    ctx.load_cert_chain(cert, key)
    return ctx


def post(url, doc, tls=None):
    """POST a JSON document; returns the decoded answer, raises OSError (incl. HTTPError)."""
    return _request(url, tls, json.dumps(doc).encode())


def get(url, tls=None):
    """GET a JSON document; returns it decoded, raises OSError (incl. HTTPError)."""
    return _request(url, tls, None)


def _request(url, tls, body):
    if url.startswith("https:") and tls is None:
        raise OSError("an https:// SMux needs --smux-tls-cert, --smux-tls-key, --smux-tls-ca")
    req = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT, context=tls) as r:
        return json.loads(r.read() or b"{}")


class ClosedReporter:
    """Queues closes from the loader and sends them to their owners."""

    def __init__(self, config, log, tls=None):
        self.config = config   # callable: the current cookie configuration (dict) or None
        self.log = log
        self.tls = tls
        self.queue = collections.deque()
        self.cv = threading.Condition()
        self.counters = {"reported": 0, "failed": 0, "dropped": 0, "no_owner": 0}
        self.stopping = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def add(self, closed):
        with self.cv:
            if len(self.queue) >= QUEUE_MAX:
                self.queue.popleft()
                self.counters["dropped"] += 1
            self.queue.append(closed)
            self.cv.notify()

    def _count(self, name, n):
        with self.cv:
            self.counters[name] += n

    def _take(self):
        """Up to BATCH queued reports per owner URL; waits for one to come."""
        with self.cv:
            while not self.queue and not self.stopping:
                self.cv.wait()
            taken = [self.queue.popleft() for _ in range(min(len(self.queue), BATCH))]
        owners = (self.config() or {}).get("statefulOwners", [])
        batches = collections.defaultdict(list)
        for c in taken:
            o = owner_of(c["ident"])
            if o < len(owners):
                batches[owners[o]].append(c)
            else:
                self._count("no_owner", 1)
        return batches

    def _send(self, url, batch):
        delay = RETRY_FIRST
        for attempt in range(ATTEMPTS):
            try:
                post(f"{url}/cheetah/closed", {"closed": batch}, self.tls)
                self._count("reported", len(batch))
                return
            except urllib.error.HTTPError as e:
                if e.code == 400:   # refused as a whole: sending it again cannot help
                    self.log("warn", "close reports refused", smux=url, error=e.read().decode(errors="replace"))
                    break
                err = f"HTTP {e.code}"
            except (OSError, ValueError) as e:
                err = str(e)
            if attempt + 1 < ATTEMPTS:
                self.log("warn", "close report failed, retrying", smux=url, error=err, retry_s=delay)
                time.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
        self._count("failed", len(batch))

    def _loop(self):
        while not self.stopping:
            for url, batch in self._take().items():
                self._send(url, batch)

    def stop(self):
        with self.cv:
            self.stopping = True
            self.cv.notify()


# /proc/net/tcp states of a socket that still has segments to place: not TIME_WAIT (06),
# CLOSE (07) or LISTEN (0A).
_GONE = {"06", "07", "0A"}


def _hex_addr(field):
    ip, port = field.split(":")
    return str(ipaddress.IPv4Address(int(ip, 16).to_bytes(4, "little"))), int(port, 16)


def live_tcp_sockets(path="/proc/net/tcp"):
    """(local ip, local port, remote ip, remote port) of this namespace's TCP sockets that
    are open (the loader's per-connection state also keeps connections that closed)."""
    out = set()
    with open(path) as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[3] not in _GONE:
                out.add(_hex_addr(fields[1]) + _hex_addr(fields[2]))
    return out


def _placeholder(url):
    """A free owner slot's address (0.0.0.0/8: no SMux has it)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        return ipaddress.IPv4Address(host) in ipaddress.IPv4Network("0.0.0.0/8")
    except ValueError:
        return False


class OwnerWatch:
    """Gives a new or restarted owner SMux its connections back (COOKIE-SPEC §7,
    "Adoption"). Every period, each owner slot's SMux is asked its boot id (GET /health);
    a slot whose (URL, boot id) is not the one its connections were last reported to gets
    them: the open hinted connections of the loader's state (open_hinted()) whose ident
    names the slot, each with this host's server id, in POST /cheetah/adopt batches. The
    slot counts as done only when every batch was answered with nothing pending; until
    then it is tried again the next period (e.g. the restarted SMux has no table yet).
    An entry the SMux refuses for its own fields (e.g. a server no longer in the pool)
    is left out and the rest sent again."""

    def __init__(self, config, open_hinted, log, period_s=1.0, tls=None, live=live_tcp_sockets):
        self.config, self.open_hinted, self.log, self.tls, self.live = config, open_hinted, log, tls, live
        self.period = period_s
        self.known = {}        # owner id -> (url, boot) its connections were last reported to
        self.counters = {"adopted": 0, "held": 0, "taken": 0, "refused": 0, "failed": 0}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopping.wait(self.period):
            try:
                self.check()
            except Exception as e:    # a bad answer must not end the watch
                self.counters["failed"] += 1
                self.log("warn", "owner re-report failed", error=str(e))

    def _stale(self, owners):
        """{owner id: (url, boot)} of the slots whose SMux is new or restarted."""
        stale = {}
        for o, url in enumerate(owners):
            if _placeholder(url):
                continue
            try:
                boot = get(f"{url}/health", self.tls).get("boot")
            except (OSError, ValueError):
                continue                     # down: its connections wait for it
            if boot and self.known.get(o) != (url, boot):
                stale[o] = (url, boot)
        return stale

    def check(self):
        cfg = self.config() or {}
        stale = self._stale(cfg.get("statefulOwners", []))
        if not stale:
            return
        live = self.live()
        conns = [c for c in self.open_hinted()
                 if (c["vip"], c["port"], c["client"], c["clientPort"]) in live]
        for o, (url, boot) in stale.items():
            mine = [dict(c, serverId=cfg["serverId"]) for c in conns if owner_of(c["ident"]) == o]
            if all(self._adopt(url, mine[i:i + BATCH]) for i in range(0, len(mine), BATCH)):
                self.known[o] = (url, boot)
                self.log("info", "connections re-reported to their owner", owner=o, smux=url,
                         boot=boot, connections=len(mine))

    def _adopt(self, url, batch):
        """One batch to url; True when every entry was applied (or refused for good)."""
        while batch:
            try:
                r = post(f"{url}/cheetah/adopt", {"adopt": batch}, self.tls)
            except urllib.error.HTTPError as e:
                err = json.loads(e.read() or b"{}") if e.code == 400 else {}
                field = err.get("field", "")
                # vip or ident refused: the SMux's table does not (yet) make it this
                # slot's owner of the VIP; the next period tries again. Another field:
                # that entry cannot be adopted (e.g. its server left the pool).
                if not field.startswith("adopt[") or field.endswith((".vip", ".ident")):
                    self.counters["failed"] += 1
                    self.log("warn", "re-report refused", smux=url, code=e.code, error=err)
                    return False
                i = int(field[len("adopt["):field.index("]")])
                self.counters["refused"] += 1
                self.log("warn", "re-report entry refused", smux=url, entry=batch[i], error=err)
                batch = batch[:i] + batch[i + 1:]
                continue
            except (OSError, ValueError) as e:
                self.counters["failed"] += 1
                self.log("warn", "re-report failed", smux=url, error=str(e))
                return False
            for k in ("adopted", "held"):
                self.counters[k] += r.get(k, 0)
            for t in r.get("taken", []):
                self.counters["taken"] += 1
                self.log("error", "re-reported connection's index held by another", smux=url, **t)
            return not r.get("pending") and not r.get("ring_full")
        return True

    def stop(self):
        self.stopping.set()


def cpu_times(path="/proc/stat"):
    """(busy, total) jiffies over every CPU: busy excludes idle and iowait."""
    with open(path) as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


class CpuLoad:
    """--load-metric cpu: the CPUs this machine kept busy since the last sample, from
    /proc/stat (1 = one CPU busy). What ToN §IV-B reports, and right for one DIP per
    machine; it weighs each request by its CPU cost. Every network namespace of a machine
    reads the same /proc/stat, so DIPs that share a machine (an emulation) all report the
    same figure."""
    unit = "cpus"

    def __init__(self, path="/proc/stat"):
        self.path = path
        self.ncpu = os.cpu_count() or 1
        self.prev = cpu_times(path)

    def sample(self):
        cur = cpu_times(self.path)
        busy, total = cur[0] - self.prev[0], cur[1] - self.prev[1]
        self.prev = cur
        return round(self.ncpu * busy / total, 4) if total > 0 else None


class ConnectionLoad:
    """--load-metric connections: the ESTABLISHED connections to this host's VIPs now --
    requests queued for accept() or in service: this DIP's queue of work. The cookie
    object's sockops program keeps the count (smux/agent/bpf/cookie.bpf.c); the loader
    writes it to its stats file as establishedConnections. snapshot: a callable giving
    that file's document (None while there is none)."""
    unit = "connections"

    def __init__(self, snapshot):
        self.snapshot = snapshot

    def sample(self):
        return (self.snapshot() or {}).get("establishedConnections")


class LoadReporter:
    """Every period, this DIP's load -- metric.sample(): CpuLoad or ConnectionLoad -- to
    every SMux. The SMuxes compare the loads of one VIP's DIPs with each other only, so
    all DIPs of a VIP must report the same metric. A period without a sample (no stats
    file yet) sends nothing."""

    def __init__(self, dip, period_s, config, log, metric, tls=None):
        self.dip, self.period, self.config, self.log, self.tls = dip, period_s, config, log, tls
        self.metric = metric
        self.counters = {"reported": 0, "failed": 0}
        self.last_load = None
        self.last_matched = None   # the last answer's count of table entries with this DIP
        self.stopping = threading.Event()
        self.failing = set()
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while not self.stopping.wait(self.period):
            load = self.metric.sample()
            if load is None:
                continue
            self.last_load = load
            for url in (self.config() or {}).get("smuxes", []):
                try:
                    r = post(f"{url}/loads", {"loads": [{"dip": self.dip, "load": load}]}, self.tls)
                    self.last_matched = r.get("matched")
                    self.counters["reported"] += 1
                    self.failing.discard(url)
                except (OSError, ValueError) as e:
                    self.counters["failed"] += 1
                    if url not in self.failing:   # once per outage, not every 100 ms
                        self.failing.add(url)
                        self.log("warn", "load report failed", smux=url, error=str(e))

    def stop(self):
        self.stopping.set()
