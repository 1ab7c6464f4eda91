#!/usr/bin/env bash
# hybridlbd's control loop on a real private OVS (k=4, 20 bridges): bash app/standalone/bench.sh [vips] [runs]
# Needs root (network namespace) and openvswitch-switch.
# P4Runtime install rate to the P4 model switch (p4/install-deps.sh): bash app/standalone/bench.sh --p4rt [vips] [runs]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
mvn -B -q -pl app/standalone -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test >/dev/null
cp="app/standalone/target/test-classes:app/standalone/target/classes:app/core/target/classes:solver/target/classes:$(cat app/standalone/target/classpath.txt)"
if [ "${1:-}" = "--p4rt" ]; then
    shift
    exec java -cp "$cp" org.hybridlb.standalone.P4rtBench "$@"
fi
exec java -cp "$cp" org.hybridlb.standalone.DaemonBench "$@"
