#!/usr/bin/env bash
# Builds the libFuzzer harnesses (ASan + UBSan) and runs each for a bounded time from
# fresh seeds (seeds.py), printing executions and crashes per target; exits 1 on any
# crash.  Used by bench.sh (30 s per target) and run-tests.sh (a short run, so that a
# lean-pass/reference divergence or an overrun fails the tests).
#   fuzz/run.sh SECONDS_PER_TARGET OUT_DIR
set -euo pipefail
SMUX="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_PER_TARGET="$1"
OUT="$2"
mkdir -p "$OUT"
for target in packet table; do
    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -march=corei7 -Wno-psabi -fno-strict-aliasing -D_GNU_SOURCE -I"$SMUX/include" -I"$SMUX/src" \
        -I"$SMUX/agent/include" \
        "$SMUX/fuzz/dp_fuzz_$target.c" "$SMUX/src/datapath.c" "$SMUX/src/conn_table.c" \
        "$SMUX/src/vip_table.c" "$SMUX/src/ovs_hash.c" "$SMUX/src/ovs_dphash.c" \
        "$SMUX/src/ovs_select.c" "$SMUX/src/cheetah.c" "$SMUX/src/stateful.c" \
        "$SMUX/src/balance.c" -ljansson -lm \
        -o "$OUT/dp_fuzz_$target"
done
rm -rf "$OUT/corpus-packet" "$OUT/corpus-table"
python3 "$SMUX/fuzz/seeds.py" "$OUT/corpus-packet" "$OUT/corpus-table"
crashes_total=0
for target in packet table; do
    art="$OUT/artifacts-$target/"
    rm -rf "$art" && mkdir -p "$art"
    log="$OUT/dp_fuzz_$target.log"
    "$OUT/dp_fuzz_$target" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
        -artifact_prefix="$art" "$OUT/corpus-$target" >"$log" 2>&1 || true
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    crashes="$(find "$art" -type f | wc -l)"
    crashes_total=$((crashes_total + crashes))
    echo "fuzz $target parser: ${execs:-0} executions in ${SECONDS_PER_TARGET}s, $crashes crashes (artifacts in $art)"
    if [ "$crashes" -gt 0 ]; then
        grep -m5 -E 'dp_fuzz_|ERROR|SUMMARY' "$log" || true
    fi
    if [ "${execs:-0}" -eq 0 ]; then
        echo "fuzz $target: no input was run (see $log)"
        crashes_total=$((crashes_total + 1))
    fi
done
[ "$crashes_total" -eq 0 ]
