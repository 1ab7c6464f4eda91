#!/usr/bin/env bash
# Runs every Prism suite (as root: namespaces, XDP, TCP_REPAIR):
#   1. unit tests: rules (validation naming the field, priorities, backups,
#      weighted round robin, least-loaded, sticky cookies), control wire
#      constants against include/hlb_prism.h, TCP state export/import on loopback
#      and the encoding's refusals
#   2. end to end on namespaces (tests/prism_testbed.py): 10,000 requests over
#      100 connections, pipelining, client FIN while a backend owns the
#      connection, backend killed mid-response, 1% loss, 100 concurrent
#      hand-offs, rules through the admin API, fabric steering (mode b: the test
#      mux pins each handed-off flow), cookie steering (mode c: the real SMux
#      follows the owner's cookie); captures checked with tshark
# Ends with "prism: N passed, N failed"; exits non-zero on any failure.
# A skipped test counts as failed: every suite here must really run in CI.
set -uo pipefail
PRISM="$(cd "$(dirname "$0")" && pwd)"
SMUX="$(dirname "$PRISM")"
export HLB_PRISM_BUILD="${HLB_PRISM_BUILD:-$SMUX/build-prism}"
export HLB_AGENT_BUILD="${HLB_AGENT_BUILD:-$SMUX/build-agent}"
export PYTHONDONTWRITEBYTECODE=1

echo "== prism: build (and the host agent, whose XDP program steers)"
if ! "$PRISM/build.sh" || ! "$SMUX/agent/build.sh"; then
    echo "prism: 0 passed, 1 failed"
    exit 1
fi

echo "== prism: unit and end-to-end tests (pytest)"
junit="$(mktemp /tmp/hlb-prism-junit-XXXXXX.xml)"
(cd "$PRISM/tests" && timeout 900 python3 -m pytest -q -s -p no:cacheprovider --junitxml="$junit" \
    test_prism_units.py test_prism_e2e.py)
read -r ok bad < <(python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 1)
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
tests = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get(k, 0)) for s in suites for k in ("failures", "errors", "skipped"))
print(tests - bad, bad if tests else max(bad, 1))
PY
)
rm -f "$junit"
echo "prism: $ok passed, $bad failed"
[ "$bad" -eq 0 ]
