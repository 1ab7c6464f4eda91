"""The emulation's shared names: its paths and ports, where one emulation lives (its network
namespace, run and TLS directories), and the process helpers every part uses (commands, the
PID log that `stop` kills by, waiting for a condition)."""
import json
import os
import signal
import subprocess
import sys
import time


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "smux", "frr"))

RUN_ROOT = "/run/hlb"
SOLVER_JAR = os.path.join(REPO, "solver", "tools", "target", "hybridlb-solver.jar")
SMUX_BIN = os.environ.get("HLB_SMUX_BIN", os.path.join(REPO, "smux", "build", "hlb-smux"))
AGENT = os.path.join(REPO, "smux", "agent", "hlb_agent.py")
AGENT_BUILD = os.environ.get("HLB_AGENT_BUILD", os.path.join(REPO, "smux", "build", "agent"))
FRR_SUPERVISOR = os.path.join(REPO, "smux", "frr", "hlb_frr_supervisor.py")
HTTP_SERVER = os.path.join(HERE, "hlb_http_server.py")
QUIC_SERVER = os.path.join(REPO, "smux", "agent", "quic_server.py")
PY = "/usr/bin/python3"            # Debian's python: Mininet lives there
RECONVERGE_PARALLEL = 4             # ovs-ofctl processes at once when the fabric reconverges
SMUX_CONTROL_PORT = 8000
AGENT_PORT = 9100
DAEMON_HOST, DAEMON_PORT = "127.0.0.1", 8080
DAEMON_BIN = os.path.join(REPO, "app", "standalone", "bin", "hybridlbd")
CLI_BIN = os.path.join(REPO, "app", "standalone", "bin", "hybridlb")
HLB_CERTS = os.path.join(REPO, "app", "standalone", "deploy", "hlb-certs")
DAEMON_URL = "https://%s:%d" % (DAEMON_HOST, DAEMON_PORT)
QUIC_PORT = 4433                    # the UDP port of the emulation's QUIC VIPs (Emu.start_quic_servers)


def netns(tag):
    return "hlbemu-" + tag


def rundir(tag):
    return os.path.join(RUN_ROOT, tag)


def tlsdir(tag):
    """The emulation's CA, certificates and API tokens."""
    return os.path.join(rundir(tag), "tls")


def cookie_document(run_dir, host):
    """Host `host`'s cookie document: its agent's --cookie-config file, which hybridlbd fills
    (PUT /cookie: its server id, its VIPs' keys) and the host's QUIC servers read."""
    return os.path.join(run_dir, "cookie-%s.json" % host)


def log(msg):
    print("[hlbemu %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def sh(cmd, check=True, env=None, **kw):
    r = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, env=env, **kw)
    if check and r.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (r.returncode, cmd, r.stdout, r.stderr))
    return r.stdout


def proc_start_time(pid):
    """The start time of a live process (None: gone, or a zombie nobody reaped yet). A process
    whose main thread has exited while its other threads still run (a SIGKILLed JVM tearing down)
    shows its main thread as a zombie: it is alive until the last thread is gone, and until then
    it may still hold its files and sockets."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        threads = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    return None if fields[0] == "Z" and threads == [str(pid)] else fields[19]


class PidLog:
    """Every process we start, as (pid, start time): stop kills exactly these, never by name."""

    def __init__(self, path):
        self.path = path

    def add(self, pid, what):
        with open(self.path, "a") as f:
            f.write(json.dumps({"pid": pid, "start": proc_start_time(pid), "what": what}) + "\n")

    def entries(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [json.loads(l) for l in f if l.strip()]


def kill_recorded(entries, sig=signal.SIGTERM):
    alive = []
    for e in entries:
        if e["start"] and proc_start_time(e["pid"]) == e["start"]:
            try:
                os.kill(e["pid"], sig)
                alive.append(e)
            except ProcessLookupError:
                pass
    return alive


def end_recorded_entries(entries, sig=signal.SIGTERM, grace=5.0):
    """`sig` to the recorded processes, SIGKILL (by PID) to those still alive `grace` s later;
    returns once all are gone (or 2 s after the SIGKILL), with the number signalled."""
    alive = kill_recorded(entries, sig)
    for then, wait in ((signal.SIGKILL, grace), (None, 2.0)):
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and kill_recorded(alive, 0):
            time.sleep(0.05)
        if then is not None:
            kill_recorded(alive, then)
    return len(alive)


# --------------------------------------------------------------------------------------
# The runner: lives inside the namespace for the lifetime of the emulation.
# --------------------------------------------------------------------------------------

def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.05)


