#!/usr/bin/env bash
# Builds Prism's data plane into smux/build-prism (or $HLB_PRISM_BUILD):
# libhlbprism.so (TCP hand-off + steering map, for the Python front end and test
# servers), the backend library's static-object server, and the test mux.
# Debian packages: gcc libbpf-dev libhttp-parser-dev clang (smux/install-deps.sh).
set -euo pipefail
PRISM="$(cd "$(dirname "$0")" && pwd)"
SMUX="$(dirname "$PRISM")"
OUT="${HLB_PRISM_BUILD:-$SMUX/build-prism}"
mkdir -p "$OUT"
CC="${CC:-cc}"
# The agent's headers: the cookie layouts and hashes of steering mode c (prism_cookie.c).
CFLAGS=(-O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I "$PRISM/include" -I "$PRISM/src"
        -I "$SMUX/agent/include")

"$CC" "${CFLAGS[@]}" -shared -fPIC "$PRISM/src/tcp_handoff.c" "$PRISM/src/prism_capi.c" \
    "$PRISM/src/prism_wire.c" "$PRISM/src/prism_cookie.c" "$PRISM/src/prism_linger.c" -lbpf \
    -o "$OUT/libhlbprism.so"
"$CC" "${CFLAGS[@]}" "$PRISM/src/prism_objserver.c" "$PRISM/src/prism_backend.c" \
    "$PRISM/src/tcp_handoff.c" "$PRISM/src/prism_wire.c" "$PRISM/src/prism_cookie.c" \
    "$PRISM/src/prism_linger.c" -lhttp_parser -lbpf -o "$OUT/hlb-prism-objserver"
# BPF_PROG_TEST_RUN of the agent's XDP program with the steering map (checks + cost).
"$CC" "${CFLAGS[@]}" -I "$SMUX/agent/include" "$PRISM/tests/steer_test.c" -lbpf -o "$OUT/prism-steer-test"
# The test topology's mux (tc ingress IP-in-IP encapsulation) and its loader.
clang -O2 -g -Wall -Werror -target bpf -I "/usr/include/$(gcc -print-multiarch)" -I "$PRISM/include" \
    -c "$PRISM/tests/mux_encap.bpf.c" -o "$OUT/mux_encap.bpf.o"
"$CC" "${CFLAGS[@]}" "$PRISM/tests/mux_loader.c" -lbpf -o "$OUT/prism-test-mux"
# 1% random loss on a link (tc egress), for the loss experiment: no netem here.
clang -O2 -g -Wall -Werror -target bpf -I "/usr/include/$(gcc -print-multiarch)" \
    -c "$PRISM/tests/loss.bpf.c" -o "$OUT/loss.bpf.o"
echo "prism build: OK ($OUT)"
