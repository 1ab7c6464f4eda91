"""End to end with real packets: an Open vSwitch HMux (ARCHITECTURE "Data
path") encapsulates client traffic in GRE towards a DIP host, whose host
agent decapsulates it into a socket bound to the VIP; replies return directly
(DSR).  The OVS hash replica predicts which flows reach this DIP.

    OVS namespace (private ovs-vswitchd)                      DIP host namespace
    client sockets on hlbv (198.51.100.1)                     hlb-agent (XDP or user space)
      -> br "in": ip,nw_dst=VIP -> select group (hash)        VIP on lo, UDP/TCP service
         bucket 0: tun_dst=10.99.0.2 (this host)  --GRE-->    10.99.0.2
         bucket 1: tun_dst=10.99.0.3 (no such host)
      <- br "ul" (NORMAL), underlay 10.99.0.1  <-----------  replies, source VIP (DSR)

Flows the replica assigns to bucket 0 must be answered; those it assigns to
bucket 1 must not (they leave towards a host that does not exist).
"""
import ctypes
import json
import os
import socket
import struct
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402
from agent_ovs_agreement import Tuple5, load_replica  # noqa: E402

VIP, CLIENT = "10.200.0.20", "198.51.100.1"
UL_OVS, UL_HOST, UL_MISSING = "10.99.0.1", "10.99.0.2", "10.99.0.3"
UDP_PORT, TCP_PORT, MGMT_PORT = 7000, 8080, 9100
PARAM, BUCKETS = 4242, [(0, 1), (1, 1)]
N_FLOWS = 24

CLIENT_CODE = r"""
import json, select, socket, sys, time
client, vip, udp_port, tcp_port = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ports = json.loads(sys.argv[5])
socks = {}
for sport in ports:   # one flow per source port, all sent at once
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((client, sport))
    s.sendto(f"flow-{sport}".encode(), (vip, udp_port))
    socks[s] = sport
udp = {p: None for p in ports}
deadline = time.monotonic() + 2.0
while time.monotonic() < deadline and any(v is None for v in udp.values()):
    ready, _, _ = select.select(list(socks), [], [], max(0.0, deadline - time.monotonic()))
    for s in ready:
        data, peer = s.recvfrom(2048)
        udp[socks[s]] = {"data": data.decode(), "peer": peer[0]}
tcp = None
if len(sys.argv) > 6:
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind((client, int(sys.argv[6]))); t.settimeout(3.0)
    t.connect((vip, tcp_port)); t.sendall(b"over-ovs-gre")
    tcp = t.recv(2048).decode(); t.close()
print(json.dumps({"udp": udp, "tcp": tcp}))
"""


def replica_bucket(lib, sport, dport, proto):
    t = Tuple5(struct.unpack("=I", socket.inet_aton(CLIENT))[0],
               struct.unpack("=I", socket.inet_aton(VIP))[0],
               socket.htons(sport), socket.htons(dport), proto)
    ids = (ctypes.c_uint32 * 2)(*[b for b, _ in BUCKETS])
    weights = (ctypes.c_uint16 * 2)(*[w for _, w in BUCKETS])
    return BUCKETS[lib.hlb_ovs_select_bucket(lib.hlb_ovs_select_hash(ctypes.byref(t), PARAM),
                                             ids, weights, 2)][0]


@pytest.fixture
def lab():
    if os.geteuid() != 0:
        pytest.skip("needs root (namespaces, OVS, XDP)")
    ovs = tl.PrivateOVS()
    host = tl.Netns(f"hlb-age-{ovs.tag}")
    procs = []
    try:
        tag = ovs.tag
        if_ovs, if_host = f"hlbo{tag}", f"hlbh{tag}"
        tl.veth_pair(ovs.ns, if_ovs, None, host, if_host, f"{UL_HOST}/24")
        ns = ovs.ns
        # Underlay bridge: the OVS side of the link plus an internal port carrying
        # the underlay address (where OVS's native GRE tunnel routes from).
        ul, br = f"hlbul{tag[:4]}", f"hlbin{tag[:4]}"
        ovs.vsctl("add-br", ul, "--", "set", "bridge", ul, "datapath_type=netdev",
                  "--", "add-port", ul, if_ovs)
        ns.run(["ip", "addr", "add", f"{UL_OVS}/24", "dev", ul])
        ns.run(["ip", "link", "set", ul, "up"])
        # HMux bridge: client port, flow-based GRE port, VIP group.
        cl = f"hlbv{tag}"
        ovs.vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev",
                  "protocols=OpenFlow13,OpenFlow15",
                  "--", "add-port", br, "gre0", "--", "set", "interface", "gre0", "type=gre",
                  "options:remote_ip=flow", "options:packet_type=legacy_l3",
                  "--", "add-port", br, cl, "--", "set", "interface", cl, "type=internal")
        ns.run(["ip", "addr", "add", f"{CLIENT}/24", "dev", cl])
        ns.run(["ip", "link", "set", cl, "up"])
        ns.run(["ethtool", "-K", cl, "tx", "off"], check=False)
        ns.run(["ip", "neigh", "add", "198.51.100.254", "lladdr", "02:00:00:00:00:fe", "dev", cl,
                "nud", "permanent"])
        ns.run(["ip", "route", "add", f"{VIP}/32", "via", "198.51.100.254", "dev", cl])
        group = (f"group_id=1,type=select,selection_method=hash,selection_method_param={PARAM},"
                 "fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst)")
        for (bid, w), dst in zip(BUCKETS, (UL_HOST, UL_MISSING)):
            group += f",bucket=bucket_id:{bid},weight:{w},actions=set_field:{dst}->tun_dst,output:gre0"
        ovs.ofctl("add-group", br, group)
        ovs.ofctl("add-flow", br, f"ip,nw_dst={VIP},actions=group:1")
        # Seed OVS's tunnel neighbour table (it would otherwise ARP first and
        # drop the first packet).
        host_mac = json.loads(host.run(["ip", "-j", "link", "show", if_host]).stdout)[0]["address"]
        subprocess.run(["ovs-appctl", "-t", ovs.vswitchd_ctl, "tnl/arp/set", ul, UL_HOST, host_mac],
                       check=True, capture_output=True, env=ovs.env)
        # DIP host: route back to clients through the underlay (DSR path).
        host.run(["ip", "route", "add", "198.51.100.0/24", "via", UL_OVS])
        yield {"ovs": ovs, "host": host, "if_host": if_host, "procs": procs}
    finally:
        for p in reversed(procs):
            if p.stdin:
                p.stdin.close()
            tl.stop_pid(p.pid)
        host.close()
        ovs.close()


@pytest.mark.parametrize("backend", ["xdp", "userspace"])
def test_ovs_hmux_gre_to_host_agent(lab, backend):
    host, ovs = lab["host"], lab["ovs"]
    agent = host.popen([sys.executable, os.path.join(tl.SMUX_DIR, "agent", "hlb_agent.py"),
                        "--iface", lab["if_host"], "--local-ip", UL_HOST, "--vip", VIP,
                        "--allow-mux", UL_OVS,   # OVS tunnels from its underlay address
                        "--decap", backend, "--listen", f"127.0.0.1:{MGMT_PORT}",
                        "--stats-interval-ms", "100", "--tun-name", "hlbtun0"],
                       stderr=subprocess.PIPE, text=True)
    lab["procs"].append(agent)
    # The agent serves HTTP only once its backend is attached.
    health = ("import sys,urllib.request\n"
              "try: urllib.request.urlopen(sys.argv[1], timeout=1); print('up')\n"
              "except Exception: pass\n")
    deadline = time.monotonic() + 20
    while "up" not in host.run([sys.executable, "-c", health,
                                f"http://127.0.0.1:{MGMT_PORT}/health"]).stdout:
        assert agent.poll() is None and time.monotonic() < deadline, "agent did not start"
        time.sleep(0.1)
    srv = host.popen([sys.executable, os.path.join(os.path.dirname(__file__), "agent_vip_server.py"),
                      VIP, "--udp", str(UDP_PORT), "--tcp", str(TCP_PORT)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lab["procs"].append(srv)
    assert json.loads(srv.stdout.readline())["ready"]

    lib = load_replica()
    ports = list(range(41000, 41000 + N_FLOWS))
    predicted = {p: replica_bucket(lib, p, UDP_PORT, 17) for p in ports}
    assert set(predicted.values()) == {0, 1}, "pick ports that exercise both buckets"
    tcp_port = next(p for p in range(42000, 43000) if replica_bucket(lib, p, TCP_PORT, 6) == 0)

    out = ovs.ns.run([sys.executable, "-c", CLIENT_CODE, CLIENT, VIP, str(UDP_PORT), str(TCP_PORT),
                      json.dumps(ports), str(tcp_port)], timeout=120)
    res = json.loads(out.stdout)
    answered = {int(p) for p, r in res["udp"].items() if r}
    expected = {p for p, b in predicted.items() if b == 0}
    print(f"\n[{backend}] OVS GRE -> host agent: {len(answered)}/{len(ports)} UDP flows answered, "
          f"replica predicted {len(expected)}; TCP via OVS: {res['tcp']!r}")
    assert answered == expected
    assert all(r["data"] == f"echo:flow-{p}" and r["peer"] == VIP
               for p, r in res["udp"].items() if r)
    assert res["tcp"] == "echo:over-ovs-gre"

    code = ("import urllib.request,sys;"
            "print(urllib.request.urlopen(sys.argv[1],timeout=3).read().decode())")
    # the agent folds its per-mux counters in periodically: give the last TCP packets up to 3 s
    for _ in range(15):
        stats = json.loads(host.run([sys.executable, "-c", code,
                                     f"http://127.0.0.1:{MGMT_PORT}/stats"]).stdout)
        by = {(m["mux"], m["encap"]): m["packets"] for m in stats["vips"][VIP]["by_mux"]}
        if by.get((UL_OVS, "gre"), 0) >= len(expected) + 3:
            break
        time.sleep(0.2)
    assert by.get((UL_OVS, "gre"), 0) >= len(expected) + 3   # UDP flows + TCP SYN/ACK/data
