#!/usr/bin/env bash
# SMux benchmarks (root).  Prints, in one run:
#   1. packet-core cost per packet without I/O (dp-bench-core), per mode, with the
#      Cheetah modes (stateless and stateful cookie decode, a stateful SYN per packet
#      against the connection table's new connections) and their ratios
#   2. net_null -> hlb-smux -> net_null, 64-byte TCP packets, 10k flows, with one
#      worker (cpu HLB_BENCH_CORE) and with HLB_BENCH_WORKERS workers (cpus 0..N-1):
#      stateless selection + IP-in-IP (crc32, ovs, ovs-dphash), connection table with
#      1M live connections, every-packet-new-connection (insert rate), and
#      dpdk-testpmd io-forward over the same vdev on the same cpus in the same run;
#      medians, cycles/packet, ratios, and the scaling of N workers against one
#   3. a bounded fuzzing run (libFuzzer) of the packet parser and the table parser:
#      executions and crashes
#   4. the AGENT helper's section (smux/agent/bench.sh), if present
# Environment: HLB_BENCH_SECONDS (per run, default 3), HLB_BENCH_REPS (default 3),
# HLB_FUZZ_SECONDS (per target, default 30), HLB_BENCH_CORE (default 1),
# HLB_BENCH_WORKERS (default: every cpu, at least 2; 1 skips the multi-worker runs),
# HLB_BENCH_AGENT=0 to skip section 4.  The wall rates and the scaling need cpus no
# other process uses: the script prints the load average next to them.
set -euo pipefail
SMUX="$(cd "$(dirname "$0")" && pwd)"
BUILD="${HLB_DP_BUILD:-$SMUX/build}"
export HLB_DP_BUILD="$BUILD" PYTHONDONTWRITEBYTECODE=1
SECONDS_PER_RUN="${HLB_BENCH_SECONDS:-3}"
REPS="${HLB_BENCH_REPS:-3}"
FUZZ_SECONDS="${HLB_FUZZ_SECONDS:-30}"
CORE="${HLB_BENCH_CORE:-1}"
NPROC="$(nproc)"
WORKERS="${HLB_BENCH_WORKERS:-$((NPROC > 2 ? NPROC : 2))}"

if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$SMUX" >/dev/null
fi
ninja -C "$BUILD" -j2 >/dev/null
TSC_HZ="$(python3 - <<'PY'
import re
# TSC rate as DPDK measures it is printed by hlb-smux; the core benchmark only needs
# it to turn CPU seconds into cycles, so the nominal CPU clock is close enough.
try:
    mhz = float(re.search(r"cpu MHz\s*:\s*([\d.]+)", open("/proc/cpuinfo").read()).group(1))
    print(int(mhz * 1e6))
except Exception:
    print(2450000000)
PY
)"

echo "== smux bench: packet core only (no I/O), CPU time of one thread"
"$BUILD/tests/dp-bench-core" "$TSC_HZ" 1
echo "== smux bench: flow pins (Prism fabric steering), pinned flows against the same flows hashed"
"$BUILD/tests/dp-bench-core" "$TSC_HZ" 1 pins

echo
echo "== smux bench: net_null -> hlb-smux -> net_null vs dpdk-testpmd (1 worker on cpu $CORE, $WORKERS workers; ${SECONDS_PER_RUN}s x $REPS)"
python3 "$SMUX/tests/dp_bench.py" --seconds "$SECONDS_PER_RUN" --reps "$REPS" --core "$CORE" \
    --workers "$WORKERS"

echo
echo "== smux bench: fuzzing (libFuzzer + ASan/UBSan, ${FUZZ_SECONDS}s per target)"
fuzz_status=0
"$SMUX/fuzz/run.sh" "$FUZZ_SECONDS" "$BUILD/fuzz" || fuzz_status=1

if [ "${HLB_BENCH_AGENT:-1}" = 1 ] && [ -x "$SMUX/agent/bench.sh" ]; then
    echo
    "$SMUX/agent/bench.sh"
fi
exit "$fuzz_status"
