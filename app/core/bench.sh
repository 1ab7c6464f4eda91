#!/usr/bin/env bash
# The core's control-loop figures on in-memory ports: bash app/core/bench.sh [vips] [runs]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
mvn -B -q -pl app/core -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=test >/dev/null
cp="app/core/target/test-classes:app/core/target/classes:solver/target/classes:$(cat app/core/target/classpath.txt)"
exec java -cp "$cp" org.hybridlb.app.core.CoreBench "$@"
