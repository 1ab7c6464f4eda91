#!/usr/bin/env bash
# hybridlbd's control loop on a real private OVS (k=4, 20 bridges): bash app/standalone/bench.sh [vips] [runs]
# Needs root (network namespace) and openvswitch-switch.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
mvn -B -q -pl app/standalone -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test >/dev/null
cp="app/standalone/target/test-classes:app/standalone/target/classes:app/core/target/classes:solver/target/classes:$(cat app/standalone/target/classpath.txt)"
exec java -cp "$cp" org.hybridlb.standalone.DaemonBench "$@"
