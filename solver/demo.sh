#!/usr/bin/env bash
# The solver's batch demo:
# generate a Duet-style data center and a 3-hour traffic trace, assign VIPs to switches,
# plan the migration to the next interval, and replay the trace with every algorithm.
# Results (JSON, CSV, PNG plots) go to ${OUT:-out/demo}. Runs in a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-out/demo}
PODS=${PODS:-8}
VIPS=${VIPS:-3000}
SEED=${SEED:-1}
JAR=solver/tools/target/hybridlb-solver.jar

if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
    echo "== installing the Java toolchain"
    bash .ci/install java
fi
echo "== building the solver"
mvn -q -B -ntp -pl solver/tools -am package -DskipTests
solver() { java -Xmx2g -jar "$JAR" "$@"; }

mkdir -p "$OUT"
echo "== data center: Duet Clos, $PODS pods x (40 ToRs + 4 Aggs), 40 cores"
solver topology duet-clos --pods "$PODS" --out "$OUT/topology.json"
echo "== workload: $VIPS VIPs, 18 intervals of 10 minutes (seed $SEED)"
solver workload --topology "$OUT/topology.json" --vips "$OUT/vips.json" \
    --traffic "$OUT/traffic.json" --vips-count "$VIPS" --seed "$SEED"

common=(--topology "$OUT/topology.json" --vips "$OUT/vips.json" --traffic "$OUT/traffic.json" --seed "$SEED")
summary() {
    python3 - "$1" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
placed = sum(1 for s in a["assignment"].values() if s != "smux")
print("  %-11s VIPs on HMuxes %5d of %-5d  HMux traffic share %.3f  MRU %.3f  SMuxes %d" % (
    a["algorithm"], placed, len(a["assignment"]), a["hmuxTrafficShare"], a["mru"], a["smuxCount"]))
PY
}
echo "== assignment of interval 0"
for alg in greedy greedy-skip random ananta; do
    solver assign "${common[@]}" --interval 0 --algorithm "$alg" --out "$OUT/assign-$alg.json"
    summary "$OUT/assign-$alg.json"
done
echo "== sticky re-assignment of interval 1, and the migration plan to it"
solver assign "${common[@]}" --interval 1 --algorithm sticky --current "$OUT/assign-greedy-skip.json" \
    --out "$OUT/assign-sticky-1.json"
summary "$OUT/assign-sticky-1.json"
solver plan --topology "$OUT/topology.json" --vips "$OUT/vips.json" --traffic "$OUT/traffic.json" \
    --interval 1 --from "$OUT/assign-greedy-skip.json" --to "$OUT/assign-sticky-1.json" --out "$OUT/plan-0-1.json"
echo "== replaying the 3-hour trace with each algorithm (plots in $OUT/simulate)"
solver simulate "${common[@]}" --out "$OUT/simulate"
echo "== done: $OUT (topology, VIPs, traffic, assignments, plan, simulate/*.csv and *.png)"
