#!/usr/bin/env bash
# Builds what the emulation suites run and is not built yet: hybridlbd and the solver CLI (which
# writes the emulation's topology), the SMux and the host agent. Run from the repository root.
set -euo pipefail
if [ ! -f app/standalone/target/hybridlbd.jar ] || [ ! -f solver/tools/target/hybridlb-solver.jar ]; then
    mvn -B -q -ntp -pl app/standalone,solver/tools -am package -DskipTests
fi
if [ ! -x smux/build/hlb-smux ]; then
    [ -f smux/build/build.ninja ] || meson setup smux/build smux >/dev/null
    ninja -C smux/build -j2 >/dev/null
fi
