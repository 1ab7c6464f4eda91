"""A two-host lab for hlb-p4switch: namespaces <tag>a and <tag>b each with one veth
to the switch's namespace <tag>s (ports 1 and 2), the switch process running there
with gRPC on a unix socket, and helpers to run commands in the hosts.  Used by the
packet test and the benchmark; everything it creates carries the tag and is removed
by close(), processes are ended by PID.

    host a: 10.0.1.10/24 via 10.0.1.1     host b: 10.0.2.10/24 via 10.0.2.1
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROUTER_MAC = "02:00:00:00:00:aa"
HOSTS = {"a": ("10.0.1.10", "10.0.1.1", 1), "b": ("10.0.2.10", "10.0.2.1", 2)}
START_TIMEOUT = 30


def sh(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


class Lab:
    def __init__(self, tag):
        self.tag = tag
        self.ns = {h: f"{tag}{h}" for h in HOSTS}
        self.ns["s"] = f"{tag}s"
        self.dir = tempfile.mkdtemp(prefix=f"{tag}-")
        self.address = f"unix:{self.dir}/p4rt.sock"
        self.switch = None
        self.macs = {}
        try:
            self._build()
        except Exception:
            self.close()
            raise

    def _build(self):
        for ns in self.ns.values():
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for h, (addr, gw, port) in HOSTS.items():
            host_if, sw_if = f"{self.tag}{h}0", f"{self.tag}p{port}"
            sh("ip", "link", "add", host_if, "netns", self.ns[h], "type", "veth", "peer",
               "name", sw_if, "netns", self.ns["s"])
            self.exec(h, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.exec("s", "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            sh("ip", "-n", self.ns[h], "addr", "add", f"{addr}/24", "dev", host_if)
            sh("ip", "-n", self.ns[h], "link", "set", host_if, "up")
            sh("ip", "-n", self.ns["s"], "link", "set", sw_if, "up")
            sh("ip", "-n", self.ns[h], "route", "add", "default", "via", gw)
            # complete checksums: the switch rewrites headers of what it receives
            self.exec(h, "ethtool", "-K", host_if, "tx", "off", check=False)
            self.exec("s", "ethtool", "-K", sw_if, "tx", "off", check=False)
            out = self.exec(h, "cat", f"/sys/class/net/{host_if}/address").stdout.strip()
            self.macs[h] = out

    def exec(self, host, *cmd, check=True, **kw):
        return sh("ip", "netns", "exec", self.ns[host], *cmd, check=check, **kw)

    def popen(self, host, *cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.ns[host], *cmd], **kw)

    def start_switch(self):
        cmd = [sys.executable, os.path.join(HERE, "hlb_p4switch.py"), "--grpc", self.address]
        for h, (_, _, port) in HOSTS.items():
            cmd += ["--port", f"{port}={self.tag}p{port}"]
        self.switch = self.popen("s", *cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.switch.stdout.readline()
        if not line:
            raise RuntimeError("hlb-p4switch did not start: " + self.switch.stderr.read())
        return json.loads(line)

    def stop_switch(self):
        if self.switch is None:
            return None
        self.switch.terminate()
        out, _ = self.switch.communicate(timeout=START_TIMEOUT)
        self.switch = None
        lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        return lines[-1] if lines else None

    def program_fabric(self, client):
        """Gateway ARP for both hosts, their routes, the tunnel source."""
        b = client.b
        ups = []
        mid = 1
        for h, (addr, gw, port) in HOSTS.items():
            ups.append(b.update("INSERT", b.table_entry(
                "HlbIngress.arp.gateway_arp", {"target_addr": gw}, "HlbIngress.arp.arp_reply",
                {"mac": ROUTER_MAC})))
            ups.append(b.update("INSERT", b.member(
                "HlbIngress.routing.ecmp_selector", mid, "HlbIngress.routing.set_next_hop",
                port=port, smac=ROUTER_MAC, dmac=self.macs[h])))
            ups.append(b.update("INSERT", b.group("HlbIngress.routing.ecmp_selector", port, [mid])))
            ups.append(b.update("INSERT", b.table_entry(
                "HlbIngress.routing.next_hop", {"next_id": port}, group=port)))
            net = addr.rsplit(".", 1)[0] + ".0"
            ups.append(b.update("INSERT", b.table_entry(
                "HlbIngress.routing.routing_v4", {"dst_addr": (net, 24)},
                "HlbIngress.routing.set_next_id", {"next_id": port})))
            mid += 1
        ups.append(b.update("MODIFY", b.table_entry(
            "HlbIngress.hmux_encap.tunnel_source", default=True,
            action="HlbIngress.hmux_encap.set_tunnel_source",
            params={"src_addr": "172.31.0.1", "ttl": 64})))
        client.write(ups)

    def close(self):
        try:
            self.stop_switch()
        except Exception:               # noqa: BLE001 -- cleanup goes on
            if self.switch:
                self.switch.kill()
        for ns in self.ns.values():
            sh("ip", "netns", "del", ns, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise TimeoutError(what)
