#!/usr/bin/env bash
# The integration suite (pytest) against a live emulation + the real hybridlbd. Root needed.
# Builds what is missing first. Last line: pytest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
# hybridlbd, and the solver CLI that writes the emulation's topology
if [ ! -f app/standalone/target/hybridlbd.jar ] || [ ! -f solver/tools/target/hybridlb-solver.jar ]; then
    mvn -B -q -ntp -pl app/standalone,solver/tools -am package -DskipTests
fi
if [ ! -x smux/build/hlb-smux ]; then
    [ -f smux/build/build.ninja ] || meson setup smux/build smux >/dev/null
    ninja -C smux/build -j2 >/dev/null
fi
# (the chaos suite, integration-tests/chaos, runs on its own: integration-tests/chaos.sh)
exec /usr/bin/python3 -m pytest -p no:cacheprovider -v -s --ignore=integration-tests/chaos integration-tests "$@"
