"""What the host agent tells the SMuxes (smux/README.md, Control API):

- close reports (POST /cheetah/closed): the sockops program reports each connection a
  stateful SMux hinted (p4/COOKIE-SPEC.md §7) when its socket reaches TCP_CLOSE; the
  loader prints it on its stdout; ClosedReporter sends it to the owner its ident names
  (bits 13-10, an index into the cookie configuration's statefulOwners), in batches,
  retrying with backoff. Under DSR the SMux never sees the server's FIN: without these
  reports its entries leave only by the idle sweep.
- load reports (POST /loads, ToN §IV-B): LoadReporter sends this DIP's CPU load every
  period to every SMux of the configuration's smuxes.

Both read the SMux lists from the current cookie configuration at every send, so a
PUT /cookie takes effect at once.
"""
import collections
import json
import os
import ssl
import threading
import time
import urllib.error
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
    if url.startswith("https:") and tls is None:
        raise OSError("an https:// SMux needs --smux-tls-cert, --smux-tls-key, --smux-tls-ca")
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST",
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


def cpu_times(path="/proc/stat"):
    """(busy, total) jiffies over every CPU: busy excludes idle and iowait."""
    with open(path) as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


class LoadReporter:
    """Every period, this DIP's load -- the CPUs kept busy over the period, from
    /proc/stat (the unit POST /loads takes: 1 = one CPU busy) -- to every SMux.
    CPU time rather than a count of connections: it weighs each request by its cost
    (the bimodal load of the balance experiment) and it is what ToN §IV-B reports."""

    def __init__(self, dip, period_s, config, log, tls=None):
        self.dip, self.period, self.config, self.log, self.tls = dip, period_s, config, log, tls
        self.ncpu = os.cpu_count() or 1
        self.counters = {"reported": 0, "failed": 0}
        self.last_load = None
        self.last_matched = None   # the last answer's count of table entries with this DIP
        self.stopping = threading.Event()
        self.failing = set()
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        prev = cpu_times()
        while not self.stopping.wait(self.period):
            cur = cpu_times()
            busy, total = cur[0] - prev[0], cur[1] - prev[1]
            prev = cur
            if total <= 0:
                continue
            self.last_load = round(self.ncpu * busy / total, 4)
            for url in (self.config() or {}).get("smuxes", []):
                try:
                    r = post(f"{url}/loads", {"loads": [{"dip": self.dip, "load": self.last_load}]},
                             self.tls)
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
