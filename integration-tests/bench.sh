#!/usr/bin/env bash
# End-to-end benchmark (medians) on the emulation with the real hybridlbd. Root; ~5-10 min.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f app/standalone/target/hybridlbd.jar ]; then mvn -B -q -ntp -pl app/standalone -am package -DskipTests; fi
exec /usr/bin/python3 integration-tests/bench.py "$@"
