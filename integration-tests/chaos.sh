#!/usr/bin/env bash
# The chaos suite (integration-tests/chaos): faults outside the designed ones against the live
# emulation and the real hybridlbd: SIGKILLs in the middle of >= 20 migrations, ovs-vswitchd
# restarted, the route server's FRR restarted, a host agent killed, an SMux hung (SIGSTOP), the
# state file damaged, the state directory full. Root needed; ~10-15 min here. Each test prints a
# `chaos:` line with its measured recovery; all of them are kept in $CHAOS_RESULTS
# (default /tmp/hlb-chaos-results.json). Last line: pytest's summary.
#   CHAOS_KILLS=20 CHAOS_KILL_BUDGET_S=900 CHAOS_SEED=22 integration-tests/chaos.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash integration-tests/build-missing.sh
rm -f "${CHAOS_RESULTS:-/tmp/hlb-chaos-results.json}"
export HLB_IT_LOGS="${HLB_IT_LOGS:-/tmp/hlb-chaos-logs}"
exec /usr/bin/python3 -m pytest -p no:cacheprovider -v -s --rootdir=integration-tests integration-tests/chaos "$@"
