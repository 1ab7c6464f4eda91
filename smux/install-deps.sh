#!/usr/bin/env bash
# Installs what smux/ needs on Debian bookworm (run as root).  Idempotent.
# One apt line per helper (DATAPATH, AGENT) so edits do not collide.
set -euo pipefail
SMUX="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
APT_INSTALL=(apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300)
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
    apt-get update -q -o DPkg::Lock::Timeout=300
fi

# AGENT/OVS: Open vSwitch userspace (agreement test), FRR, XDP toolchain + libbpf, cmocka, tools
# (iperf3: agent/bench.sh's cookie VIP against a plain one).
"${APT_INSTALL[@]}" openvswitch-switch openvswitch-common frr clang llvm libbpf-dev libcmocka-dev gcc libc6-dev linux-libc-dev iproute2 ethtool python3 python3-pip iperf3

# AGENT/OVS: Python test deps and the host agent's runtime dependency (PyPI).
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check \
    -r "$SMUX/requirements-test.txt" -r "$SMUX/agent/requirements.txt"

# PRISM: http-parser (the backends' HTTP parsing), the test clients and captures
# (h2load, tcpdump, tshark), the proxy baselines (HAProxy, nginx), wrk for the benchmark.
"${APT_INSTALL[@]}" libhttp-parser-dev nghttp2-client tcpdump tshark haproxy nginx-light wrk gcc libc6-dev libbpf-dev clang iproute2 ethtool python3 python3-pip
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check -r "$SMUX/prism/requirements.txt"

# SECURITY: GnuTLS for the control API's mutual TLS (libmicrohttpd's TLS, client-certificate
# checks), openssl for deploy/hlb-certs (the tests' certificates).
"${APT_INSTALL[@]}" libgnutls28-dev openssl

# DATAPATH: DPDK 22.11 (libs, PMDs, dpdk-testpmd), meson/ninja, jansson, libmicrohttpd, cmocka, clang (libFuzzer), valgrind (tests/dp_instr_count.py).
"${APT_INSTALL[@]}" libdpdk-dev dpdk-dev meson ninja-build pkg-config gcc libc6-dev libjansson-dev libmicrohttpd-dev libcmocka-dev libpcap-dev clang libclang-rt-14-dev iproute2 python3 python3-pip valgrind
