"""The host agent's packet path: the VIPs put on lo (VipSetup) and the C decapsulator it runs
and watches (DecapBackend: hlb-agent-xdp, else hlb-agent-udecap), with its stats and events."""
import json
import os
import select
import signal
import subprocess
import threading

from agent_log import log

# Loading and verifying the XDP and cookie programs: 16 agents starting at once on a loaded
# 2-core host took over 5 s, and the fallback then left those hosts without cookies.
BACKEND_START_TIMEOUT = 30.0


class VipSetup:
    """VIPs on lo + ARP sysctls for DSR; undoes exactly what it did."""

    SYSCTLS = {"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2"}

    def __init__(self, vips):
        self.added = []
        self.saved = {}
        for key, value in self.SYSCTLS.items():
            path = f"/proc/sys/{key}"
            with open(path) as f:
                self.saved[path] = f.read().strip()
            with open(path, "w") as f:
                f.write(value)
        for vip in vips:
            r = subprocess.run(["ip", "addr", "add", f"{vip}/32", "dev", "lo"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                self.added.append(vip)
            elif "exists" not in r.stderr:
                raise RuntimeError(f"cannot add VIP {vip} to lo: {r.stderr.strip()}")

    def undo(self):
        for vip in self.added:
            subprocess.run(["ip", "addr", "del", f"{vip}/32", "dev", "lo"], capture_output=True)
        for path, value in self.saved.items():
            with open(path, "w") as f:
                f.write(value)


class DecapBackend:
    """The C packet path as a child process that writes a counter file."""

    def __init__(self, cfg, run_dir, cookies=None, on_closed=None):
        self.cfg = cfg
        self.cookies = cookies
        self.on_closed = on_closed
        self.stats_file = os.path.join(run_dir, "decap-stats.json")
        self.proc = None
        self.info = {}
        self.dump_lock = threading.Lock()
        self.dump_done = threading.Event()
        self.dump_rows = []
        kinds = {"auto": ["xdp", "userspace"], "xdp": ["xdp"], "userspace": ["userspace"]}
        errors = []
        for kind in kinds[cfg.decap]:
            err = self._start(kind)
            if err is None:
                return
            errors.append(f"{kind}: {err}")
            log("warn", "decap backend failed to start", backend=kind, error=err)
        raise RuntimeError("no decap backend could start: " + "; ".join(errors))

    def _command(self, kind):
        c = self.cfg
        locals_ = [arg for ip in c.local_ip for arg in ("--local-ip", ip)]
        interval = c.stats_interval_ms
        if c.load_metric == "connections" and c.load_report_ms:
            interval = min(interval, c.load_report_ms)   # each report reads a fresh count
        common = ["--stats-file", self.stats_file, "--interval-ms", str(interval)]
        # An empty list is not passed: the backends then accept any address.
        common += [arg for p in c.allow_mux for arg in ("--allow-mux", p)]
        common += [arg for p in c.allow_vip for arg in ("--allow-vip", p)]
        if kind == "xdp":
            if self.cookies:
                common += ["--cookie-obj", os.path.join(c.build_dir, "cookie.bpf.o"),
                           "--cookie-config", self.cookies.loader_file, "--cgroup", c.cgroup]
                common += ["--pin-dir", c.pin_dir] if c.pin_dir else []
                common += ["--count-established"] if c.load_metric == "connections" else []
            common += ["--prism-pin-dir", c.prism_pin_dir] if c.prism_pin_dir else []
            common += ["--prism-backend"] if c.prism_backend else []
            return [os.path.join(c.build_dir, "hlb-agent-xdp"), "--iface", c.iface,
                    "--obj", os.path.join(c.build_dir, "xdp_decap.bpf.o"),
                    "--mode", c.xdp_mode] + locals_ + common
        return [os.path.join(c.build_dir, "hlb-agent-udecap"), "--tun", c.tun_name] + locals_ + common

    def _start(self, kind):
        try:
            proc = subprocess.Popen(self._command(kind), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        except OSError as e:
            return str(e)
        ready, _, _ = select.select([proc.stdout], [], [], BACKEND_START_TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            _, err = proc.communicate()
            return err.strip() or "no readiness line"
        self.proc = proc
        self.info = dict(json.loads(line), backend=kind)
        if self.cookies:
            self.cookies.attached(kind, proc)
        # Keep draining stderr into our log so the child never blocks on it.
        threading.Thread(target=self._drain, daemon=True).start()
        threading.Thread(target=self._events, daemon=True).start()
        log("info", "decap backend attached", **self.info)
        return None

    def _drain(self):
        for line in self.proc.stderr:
            log("warn", "decap backend", backend=self.info.get("backend"), line=line.strip())

    def open_hinted(self, timeout=5.0):
        """The hinted connections of the loader's per-connection state ({"vip", "port",
        "client", "clientPort", "ident"} each): the loader lists them on SIGUSR1."""
        if self.info.get("backend") != "xdp" or not self.alive():
            return []
        with self.dump_lock:
            self.dump_rows = []
            self.dump_done.clear()
            self.proc.send_signal(signal.SIGUSR1)
            if not self.dump_done.wait(timeout):
                raise OSError("the loader did not list its connections in %.0f s" % timeout)
            return list(self.dump_rows)

    def _events(self):
        """The loader's lines after the readiness one: closes of hinted connections,
        which cookie configuration its maps hold, and the open hinted connections it
        lists on SIGUSR1."""
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
                closed, config = event.get("closed"), event.get("cookieConfig")
            except (ValueError, AttributeError):
                event, closed = {}, None
                config = None
            if "open" in event:
                self.dump_rows.append(event["open"])
            elif "openEnd" in event:
                self.dump_done.set()
            elif config is not None and self.cookies:
                self.cookies.loader_said(config)
                if config.get("refused"):
                    log("error", "cookie file refused by the loader: its maps keep the previous keys", **config)
                else:
                    log("info", "cookie maps reloaded", **config)
            elif closed is not None:
                if self.on_closed:
                    self.on_closed(closed)
            else:
                log("warn", "decap backend: unexpected output", line=line.strip())

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def snapshot(self):
        try:
            with open(self.stats_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
