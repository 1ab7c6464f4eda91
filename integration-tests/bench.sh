#!/usr/bin/env bash
# End-to-end benchmark (medians) on the emulation with the real hybridlbd. Root; ~5-10 min.
set -euo pipefail
cd "$(dirname "$0")/.."
# hybridlbd, and the solver CLI that writes the emulation's topology
if [ ! -f app/standalone/target/hybridlbd.jar ] || [ ! -f solver/tools/target/hybridlb-solver.jar ]; then
    mvn -B -q -ntp -pl app/standalone,solver/tools -am package -DskipTests
fi
exec /usr/bin/python3 integration-tests/bench.py "$@"
