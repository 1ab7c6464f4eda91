#!/usr/bin/env bash
# Runs every AGENT/OVS/FRR suite of smux/ (as root: namespaces, XDP, OVS, FRR):
#   1. cmocka unit tests of the OVS 3.1 select-group replica, the decap
#      packet fixtures (XDP program via BPF_PROG_TEST_RUN + user-space parser), and
#      the Cheetah cookie programs on the shared vectors (p4/vectors) plus 10,000
#      random rows the reference model draws, and on scapy fixtures
#   2. OVS agreement test against a private ovs-vswitchd (>= 10,000 5-tuples):
#      the replica and the real hlb-smux (from smux/build or $HLB_DP_BUILD); the WCMP
#      split of the controller's pools in every selection mode (10,000 flows a pool)
#   3. host agent: XDP and user-space decap, DSR, health, counters (namespaces),
#      and end to end behind a real OVS HMux (GRE), flows predicted by the replica
#   4. FRR supervisor: announce / withdraw within 1 s (two FRR in namespaces)
#   5. Cheetah cookies: the reference model (p4/model), and a real TCP connection
#      through the agent (tcp_timestamps=1, offloads off and on), the /cookie API;
#      reports to a real hlb-smux: closes of stateful connections, loads (CPU, and
#      the ESTABLISHED connections the sockops program counts); QUIC: a
#      real aioquic client through a real hlb-smux to two cookie QUIC servers
# Ends with "agent: N passed, N failed"; exits non-zero on any failure.
# A skipped test counts as failed: every suite here must really run in CI.
set -uo pipefail
AGENT="$(cd "$(dirname "$0")" && pwd)"
SMUX="$(dirname "$AGENT")"
export HLB_AGENT_BUILD="${HLB_AGENT_BUILD:-$SMUX/build-agent}"
export PYTHONDONTWRITEBYTECODE=1
passed=0
failed=0

echo "== agent: build"
if ! "$AGENT/build.sh"; then
    echo "agent: 0 passed, 1 failed"
    exit 1
fi

# cmocka binaries exit with the number of failed tests.
run_cmocka() {
    local title="$1"; shift
    echo "== agent: $title (cmocka)"
    local out rc total n_failed
    out="$("$@" 2>&1)"
    rc=$?
    echo "$out"
    total="$(sed -n 's/^\[==========\] \([0-9]*\) test(s) run\./\1/p' <<<"$out")"
    total="${total:-0}"
    if [ "$rc" -eq 0 ] && [ "$total" -gt 0 ]; then
        passed=$((passed + total))
    else
        n_failed=$(( rc > 0 ? rc : 1 ))
        failed=$((failed + n_failed))
        passed=$((passed + (total > n_failed ? total - n_failed : 0)))
    fi
}
run_cmocka "OVS replica unit tests" \
    "$HLB_AGENT_BUILD/agent_test_ovs_hash" "$SMUX/tests/data/agent_ovs_select_vectors.txt"
run_cmocka "decap packet fixtures, XDP and user-space parser" \
    "$HLB_AGENT_BUILD/agent_test_decap" "$HLB_AGENT_BUILD/xdp_decap.bpf.o" \
    "$SMUX/tests/data/agent_decap_fixtures.txt"
# A new seed every run (printed, to replay a failure with --seed).
seed="${HLB_COOKIE_SEED:-$RANDOM$RANDOM}"
echo "cookie vectors: 10,000 random rows from seed $seed"
python3 "$SMUX/../p4/model/gen_cookie_vectors.py" --random 10000 --seed "$seed" --no-fixed \
    > "$HLB_AGENT_BUILD/cookie_vectors_random.csv"
run_cmocka "Cheetah cookie: tc egress + XDP restore on the shared vectors and fixtures" \
    "$HLB_AGENT_BUILD/agent_test_cookie" "$HLB_AGENT_BUILD/xdp_decap.bpf.o" \
    "$HLB_AGENT_BUILD/cookie.bpf.o" "$SMUX/tests/data/agent_cookie_fixtures.txt" \
    "$SMUX/../p4/vectors/cookie_vectors.csv" "$HLB_AGENT_BUILD/cookie_vectors_random.csv"

echo "== agent: OVS agreement, host agent, FRR, cookies (pytest)"
junit="$(mktemp /tmp/hlb-agent-junit-XXXXXX.xml)"
(cd "$SMUX" && python3 -m pytest -q -s -p no:cacheprovider --junitxml="$junit" \
    tests/agent_ovs_agreement.py tests/agent_wcmp_split.py tests/agent_host_agent.py tests/agent_ovs_gre_e2e.py \
    tests/frr_supervisor_test.py ../p4/model/test_cheetah_cookie.py tests/agent_cookie_e2e.py \
    tests/agent_smux_reports.py tests/agent_load_metric.py tests/agent_owner_watch.py tests/agent_quic_e2e.py)
read -r py_passed py_failed < <(python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
tests = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get(k, 0)) for s in suites for k in ("failures", "errors", "skipped"))
print(tests - bad, bad)
PY
) || { py_passed=0; py_failed=1; }
rm -f "$junit"
passed=$((passed + py_passed))
failed=$((failed + py_failed))

echo "agent: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
