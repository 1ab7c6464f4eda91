#!/usr/bin/env bash
# Installs what topologies/ and integration-tests/ need on Debian bookworm (root). Idempotent.
# (smux/install-deps.sh brings DPDK, OVS, FRR, the agent's toolchain; .ci/install runs both.)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
    apt-get update -q -o DPkg::Lock::Timeout=300
fi
# Mininet (Debian's, for /usr/bin/python3), OVS userspace, FRR, traffic tools, and the
# Python packages the emulation, the host agent and the integration tests import under
# /usr/bin/python3 (Debian packages: Mininet lives in that interpreter).
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 \
    mininet openvswitch-switch openvswitch-common frr iproute2 ethtool util-linux \
    iperf3 wrk curl iputils-ping netcat-openbsd \
    python3 python3-pytest python3-requests python3-prometheus-client
# The emulation's certificates (app/standalone/deploy/hlb-certs).
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 openssl python3-venv
# Schemathesis 4 fuzzes the live daemon (integration-tests/test_api_fuzz.py). It needs a newer
# pytest than Debian's, so it lives in a virtualenv of its own, away from /usr/bin/python3.
fuzz=/opt/hybridlb-fuzz
if [ ! -x "$fuzz/bin/st" ]; then
    python3 -m venv "$fuzz"
    "$fuzz/bin/pip" install -q --disable-pip-version-check 'schemathesis>=4,<5'
fi
# Observability: Prometheus (the emulation's server scrapes hybridlbd, SMuxes and agents), headless
# chromium + its WebDriver for the web view's browser test and the demo's screenshot (certutil puts
# the emulation's CA in the browser's NSS store), selenium 4 for the interpreter the emulation uses.
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 \
    prometheus chromium chromium-driver libnss3-tools python3-pip
PIP_BREAK_SYSTEM_PACKAGES=1 /usr/bin/python3 -m pip install -q --disable-pip-version-check 'selenium>=4,<5'
