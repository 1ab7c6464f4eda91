#!/usr/bin/env bash
# Installs what p4/ needs on Debian bookworm (root), idempotent: the model switch and
# its tests run under Debian's /usr/bin/python3, the interpreter of the emulation.
# No P4 compiler or software switch: none is packaged for these registries (README.md).
set -euo pipefail
P4="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
    apt-get update -q -o DPkg::Lock::Timeout=300
fi
# gcc: the test shim over smux/include/hlb_pkt.h; iproute2, ethtool, ping: the namespace tests.
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 \
    python3 python3-pip python3-pytest gcc libc6-dev iproute2 ethtool iputils-ping
PIP_BREAK_SYSTEM_PACKAGES=1 /usr/bin/python3 -m pip install -q --disable-pip-version-check \
    -r "$P4/requirements.txt"
