"""The local service's health as the host agent reports it: a prober (TCP connect or HTTP GET)
with rise and fall counts, or none."""
import socket
import threading
import time
import urllib.error
import urllib.request

from agent_log import log

class HealthProber:
    """Probes one local service; healthy after `rise` successes in a row,
    unhealthy after `fall` failures in a row."""

    def __init__(self, cfg, check):
        self.cfg = cfg
        self.check = check
        self.healthy = False
        self.last = {"ok": None, "error": None, "latency_s": None, "time": None}
        self.successes = self.failures = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        threading.Thread(target=self._loop, daemon=True).start()

    def probe_once(self):
        kind, host, port, url = self.check
        t0 = time.monotonic()
        try:
            if kind == "tcp":
                with socket.create_connection((host, port), timeout=self.cfg.check_timeout):
                    pass
            else:
                with urllib.request.urlopen(url, timeout=self.cfg.check_timeout) as r:
                    if not 200 <= r.status < 400:
                        raise OSError(f"HTTP {r.status}")
            return True, None, time.monotonic() - t0
        except (OSError, urllib.error.URLError) as e:
            return False, str(e), time.monotonic() - t0

    def _loop(self):
        while not self.stopping.is_set():
            ok, err, latency = self.probe_once()
            with self.lock:
                self.last = {"ok": ok, "error": err, "latency_s": round(latency, 6),
                             "time": time.time()}
                if ok:
                    self.successes, self.failures = self.successes + 1, 0
                    if not self.healthy and self.successes >= self.cfg.rise:
                        self.healthy = True
                        log("info", "check healthy", dip=self.cfg.dip, check=self.check[3])
                else:
                    self.successes, self.failures = 0, self.failures + 1
                    if self.healthy and self.failures >= self.cfg.fall:
                        self.healthy = False
                        log("warn", "check unhealthy", dip=self.cfg.dip, check=self.check[3],
                            error=err)
            self.stopping.wait(self.cfg.check_interval)

    def state(self):
        with self.lock:
            return {"check": self.check[3], "healthy": self.healthy, "last": dict(self.last)}


class DipHealth:
    """The DIP is healthy when every check passes (no check: healthy)."""

    def __init__(self, cfg):
        self.dip = cfg.dip
        self.probers = [HealthProber(cfg, c) for c in cfg.check]

    def state(self):
        checks = [p.state() for p in self.probers]
        return {"dip": self.dip, "healthy": all(c["healthy"] for c in checks), "checks": checks}

    def stop(self):
        for p in self.probers:
            p.stopping.set()
