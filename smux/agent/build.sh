#!/usr/bin/env bash
# Builds the host agent's packet path and the AGENT/OVS test binaries into
# smux/build-agent (or $HLB_AGENT_BUILD): XDP object, Cheetah cookie object (tc
# egress + sockops), XDP loader, user-space fallback, cmocka tests (OVS replica,
# decap fixtures, cookie vectors), ctypes shim for the agreement test.
# Debian packages: clang llvm libbpf-dev libcmocka-dev (smux/install-deps.sh).
set -euo pipefail
AGENT="$(cd "$(dirname "$0")" && pwd)"
SMUX="$(dirname "$AGENT")"
OUT="${HLB_AGENT_BUILD:-$SMUX/build-agent}"
mkdir -p "$OUT"
CC="${CC:-cc}"
CFLAGS=(-O2 -g -Wall -Wextra -Werror -I "$AGENT/include" -I "$AGENT/src" -I "$SMUX/include")

for prog in xdp_decap cookie; do
    clang -O2 -g -Wall -Werror -target bpf -I "$AGENT/include" \
        -I "/usr/include/$(gcc -print-multiarch)" \
        -c "$AGENT/bpf/$prog.bpf.c" -o "$OUT/$prog.bpf.o"
done
"$CC" "${CFLAGS[@]}" "$AGENT/src/xdp_loader.c" "$AGENT/src/stats_file.c" "$AGENT/src/cookie_maps.c" \
    -lbpf -o "$OUT/hlb-agent-xdp"
"$CC" "${CFLAGS[@]}" "$AGENT/src/udecap.c" "$AGENT/src/stats_file.c" -o "$OUT/hlb-agent-udecap"
"$CC" "${CFLAGS[@]}" "$SMUX/tests/agent_test_ovs_hash.c" -lcmocka -o "$OUT/agent_test_ovs_hash"
"$CC" "${CFLAGS[@]}" "$SMUX/tests/agent_test_decap.c" -lbpf -lcmocka -o "$OUT/agent_test_decap"
"$CC" "${CFLAGS[@]}" "$SMUX/tests/agent_test_cookie.c" "$AGENT/src/cookie_maps.c" -lbpf -lcmocka \
    -o "$OUT/agent_test_cookie"
"$CC" "${CFLAGS[@]}" "$SMUX/tests/agent_pktgen.c" -o "$OUT/agent_pktgen"
"$CC" "${CFLAGS[@]}" -shared -fPIC "$SMUX/tests/agent_ovs_hash_pyshim.c" -o "$OUT/libhlb_ovs_hash_test.so"
echo "agent build: OK ($OUT)"
