#!/usr/bin/env bash
# Prism benchmark (as root; namespaces of its own): bandwidth of Prism vs HAProxy
# vs nginx vs direct access with every link shaped to X, per-request start-up /
# tear-down / total for a 2 MB response, steering cost per packet.  Prints the
# tables.  Options go to tests/prism_bench.py (--rate X, --conns, --seconds, ...).
set -euo pipefail
PRISM="$(cd "$(dirname "$0")" && pwd)"
"$PRISM/build.sh" >/dev/null
"$(dirname "$PRISM")/agent/build.sh" >/dev/null
cd "$PRISM/tests" && exec python3 prism_bench.py "$@"
