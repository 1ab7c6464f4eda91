#!/usr/bin/env bash
# Builds smux/ (meson + ninja into smux/build) and runs every smux test (as root:
# DPDK EAL without hugepages, network namespaces, XDP, OVS, FRR):
#   DATAPATH: cmocka unit tests of the packet core, tables and control operations,
#             EAL tests on net_ring (meson suite "dp"); net_pcap packet fixtures and
#             control-API tests over af_packet/veth (Python + scapy), option checks,
#             a short bounded fuzz of the packet core and table parser
#   AGENT:    smux/agent/run-tests.sh (OVS replica and agreement, host agent, FRR;
#             HLB_SKIP_AGENT=1 skips it, for working on the datapath alone)
#   PRISM:    smux/prism/run-tests.sh (request hand-off: rules, TCP_REPAIR, end to end
#             on namespaces; HLB_SKIP_PRISM=1 skips it)
# Ends with "smux: N passed, N failed"; exits non-zero on any failure.
set -uo pipefail
SMUX="$(cd "$(dirname "$0")" && pwd)"
BUILD="${HLB_DP_BUILD:-$SMUX/build}"
export HLB_DP_BUILD="$BUILD" PYTHONDONTWRITEBYTECODE=1
passed=0
failed=0

summary() {
    echo "smux: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

echo "== smux: build ($BUILD)"
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$SMUX" || { failed=$((failed + 1)); summary; }
fi
if ! ninja -C "$BUILD" -j2; then
    failed=$((failed + 1))
    summary
fi

echo "== smux: DATAPATH unit and EAL tests (meson suite dp)"
meson test -C "$BUILD" --suite dp --num-processes 2 --print-errorlogs
read -r ok bad < <(python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, re, sys
ok = bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)                 # only the suite just run is in the log
    out = (r.get("stdout") or "") + (r.get("stderr") or "")
    # cmocka prints "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s), listed below:"
    p = sum(int(n) for n in re.findall(r"\[  PASSED  \] (\d+) test", out))
    f = sum(int(n) for n in re.findall(r"\[  FAILED  \] (\d+) test", out))
    if r["result"] == "OK":
        ok += max(p, 1)
    else:
        ok += p
        bad += max(f, 1)
print(ok, bad)
PY
)
passed=$((passed + ok))
failed=$((failed + bad))
if [ $((ok + bad)) -eq 0 ]; then
    echo "no dp tests ran"
    failed=$((failed + 1))
fi

# Python suites: unittest, counted per test case.
run_py() {
    local title="$1" script="$2"
    echo "== smux: $title"
    local out rc n_ok n_bad
    out="$(timeout 600 python3 "$script" 2>&1)"
    rc=$?
    echo "$out" | tail -40
    n_ok="$(grep -c '\.\.\. ok$' <<<"$out")"
    n_bad="$(grep -cE '\.\.\. (FAIL|ERROR)$' <<<"$out")"
    if [ "$rc" -ne 0 ] && [ "$n_bad" -eq 0 ]; then
        n_bad=1
    fi
    passed=$((passed + n_ok))
    failed=$((failed + n_bad))
}
run_py "DATAPATH command-line options" "$SMUX/tests/dp_options_test.py"
run_py "DATAPATH net_pcap packet fixtures" "$SMUX/tests/dp_pcap_test.py"
run_py "DATAPATH control API over af_packet/veth" "$SMUX/tests/dp_api_test.py"
run_py "DATAPATH stateful Cheetah: an SMux holding several owner ids" "$SMUX/tests/dp_sf_owners_test.py"
run_py "SECURITY control API over mutual TLS" "$SMUX/tests/dp_tls_test.py"
run_py "OVS default selection (ovs-dphash) against ovs-vswitchd" "$SMUX/tests/agent_ovs_dphash_agreement.py"

# A short bounded fuzz of the packet core (lean pass against the general code, ASan)
# and the table parser; bench.sh runs the same harnesses longer.
echo "== smux: fuzzing (libFuzzer, ${HLB_TEST_FUZZ_SECONDS:-10}s per target)"
if "$SMUX/fuzz/run.sh" "${HLB_TEST_FUZZ_SECONDS:-10}" "$BUILD/fuzz"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

if [ "${HLB_SKIP_PRISM:-0}" != 1 ] && [ -x "$SMUX/prism/run-tests.sh" ]; then
    prism_out="$("$SMUX/prism/run-tests.sh" 2>&1)"
    echo "$prism_out" | tail -60
    line="$(grep -E '^prism: [0-9]+ passed, [0-9]+ failed' <<<"$prism_out" | tail -1)"
    if [ -n "$line" ]; then
        passed=$((passed + $(sed -E 's/^prism: ([0-9]+) passed.*/\1/' <<<"$line")))
        failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
    else
        echo "prism suites did not report a summary"
        failed=$((failed + 1))
    fi
fi

if [ "${HLB_SKIP_AGENT:-0}" != 1 ] && [ -x "$SMUX/agent/run-tests.sh" ]; then
    agent_out="$("$SMUX/agent/run-tests.sh" 2>&1)"
    echo "$agent_out"
    line="$(grep -E '^agent: [0-9]+ passed, [0-9]+ failed' <<<"$agent_out" | tail -1)"
    if [ -n "$line" ]; then
        passed=$((passed + $(sed -E 's/^agent: ([0-9]+) passed.*/\1/' <<<"$line")))
        failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
    else
        echo "agent suites did not report a summary"
        failed=$((failed + 1))
    fi
fi
summary
