#!/usr/bin/env bash
# Host agent benchmarks (root).  Prints:
#   - XDP decapsulator cost per packet (BPF_PROG_TEST_RUN, median/p99 of single runs)
#   - Cheetah cookie: host egress encode cost per packet (BPF_PROG_TEST_RUN, median)
#   - end-to-end decap rate into the local stack, XDP vs user-space fallback,
#     through a veth pair between two namespaces, in one run (ratio printed)
#   - iperf3 through a cookie VIP against the same VIP without cookies, through a real
#     hlb-smux (needs smux/build/hlb-smux: smux/README.md, Build)
set -euo pipefail
AGENT="$(cd "$(dirname "$0")" && pwd)"
SMUX="$(dirname "$AGENT")"
export HLB_AGENT_BUILD="${HLB_AGENT_BUILD:-$SMUX/build-agent}"
export PYTHONDONTWRITEBYTECODE=1
"$AGENT/build.sh" >/dev/null
echo "== agent bench: XDP program cost"
"$HLB_AGENT_BUILD/agent_test_decap" "$HLB_AGENT_BUILD/xdp_decap.bpf.o" \
    "$SMUX/tests/data/agent_decap_fixtures.txt" --bench "${HLB_AGENT_BENCH_RUNS:-100000}"
echo "== agent bench: Cheetah cookie host egress encode (target <= 100 ns/packet)"
"$HLB_AGENT_BUILD/agent_test_cookie" "$HLB_AGENT_BUILD/xdp_decap.bpf.o" \
    "$HLB_AGENT_BUILD/cookie.bpf.o" "$SMUX/tests/data/agent_cookie_fixtures.txt" \
    "$SMUX/../p4/vectors/cookie_vectors.csv" --bench "${HLB_AGENT_BENCH_RUNS:-100000}"
echo "== agent bench: end-to-end decap rate (veth, ${HLB_AGENT_BENCH_SECONDS:-3} s per case)"
python3 "$SMUX/tests/agent_bench_decap.py" "${HLB_AGENT_BENCH_SECONDS:-3}"
echo "== agent bench: iperf3, cookie VIP vs the same VIP without cookies (target: within 2%)"
python3 "$SMUX/tests/agent_iperf_bench.py" --rounds "${HLB_AGENT_BENCH_IPERF_ROUNDS:-7}"
