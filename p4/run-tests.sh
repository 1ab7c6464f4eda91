#!/usr/bin/env bash
# Every test of p4/ (as root: the packet test uses network namespaces): the P4Info and
# generated constants against the P4 source, the reference model (packets, cookies),
# its agreement with the SMux's C hash, and hlb-p4switch over real gRPC and real packets.
# P4 itself is not compiled here (README.md says why).  Ends with pytest's summary line.
set -uo pipefail
P4="$(cd "$(dirname "$0")" && pwd)"
export PYTHONDONTWRITEBYTECODE=1 PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python
cd "$P4/tests"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider test_p4info.py test_model.py \
    test_smux_agreement.py test_p4rt_service.py test_p4rt_packets.py
