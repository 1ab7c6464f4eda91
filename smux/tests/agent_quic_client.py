#!/usr/bin/env python3
"""Test client of agent_quic_e2e.py (aioquic), printing one JSON line.

    agent_quic_client.py get VIP PORT N        one connection, N HTTP/0.9 requests in turn:
        {"answers": [...], "original_dcid": hex, "dcid": hex (the id in use at the end),
         "spare_dcids": [hex, ...] (ids the server issued with NEW_CONNECTION_ID)}
    agent_quic_client.py initials VIP PORT K   one client Initial (aioquic's), the same
        bytes sent from K source ports: {"dcid": hex}
    agent_quic_client.py forged VIP PORT K     K short-header packets with random
        8-byte connection ids: {"sent": K}
"""
import asyncio
import json
import os
import socket
import sys

from aioquic.quic.connection import QuicConnection

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent"))
import quic_hq  # noqa: E402


async def get(vip, port, n):
    answers = []
    async with quic_hq.open_connection(vip, port) as proto:
        quic = proto._quic
        for i in range(n):
            answers.append(await quic_hq.get(proto, f"/r{i}", 10))
        return {"answers": answers, "original_dcid": quic._original_destination_connection_id.hex(),
                "dcid": quic._peer_cid.cid.hex(),
                "spare_dcids": [c.cid.hex() for c in quic._peer_cid_available]}


def initials(vip, port, k):
    conn = QuicConnection(configuration=quic_hq.client_configuration())
    conn.connect((vip, port), now=0.0)
    datagram = next(iter(conn.datagrams_to_send(now=0.0)))[0]
    for _ in range(k):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(datagram, (vip, port))
    return {"dcid": conn._peer_cid.cid.hex(), "bytes": len(datagram)}


def forged(vip, port, k):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(k):
            s.sendto(bytes([0x40]) + os.urandom(8) + os.urandom(40), (vip, port))
    return {"sent": k}


def main():
    mode, vip, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if mode == "get":
        out = asyncio.run(asyncio.wait_for(get(vip, port, n), 30))
    elif mode == "initials":
        out = initials(vip, port, n)
    else:
        out = forged(vip, port, n)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
