#!/usr/bin/env bash
# hybridlb main job: installs what it needs, builds, and runs the k=4 fat-tree demo
# (topologies/demo.py): hybridlbd balancing real traffic over OVS HMuxes and DPDK SMuxes,
# an HMux switch failure, a migration, and a summary of measured figures. A few minutes;
# cleans up after itself (also on Ctrl-C). Needs root.
#   topologies/run-demo.sh [--no-install] [demo.py options]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then echo "run-demo: needs root (namespaces, OVS, DPDK)" >&2; exit 1; fi
if [ "${1:-}" = "--no-install" ]; then shift; else
    echo "== install (apt/pip: Java, DPDK, OVS, FRR, Mininet)"
    bash .ci/install >/dev/null
fi
if [ ! -f app/standalone/target/hybridlbd.jar ] || [ ! -f solver/tools/target/hybridlb-solver.jar ]; then
    echo "== build the Java modules (solver library and tools, app/core, app/standalone)"
    mvn -B -q -ntp -pl app/standalone,solver/tools -am package -DskipTests
fi
if [ ! -x smux/build/hlb-smux ]; then
    echo "== build the SMux and host agent (meson/ninja)"
    [ -f smux/build/build.ninja ] || meson setup smux/build smux >/dev/null
    ninja -C smux/build -j2 >/dev/null
fi
exec /usr/bin/python3 topologies/demo.py "$@"
