"""Cheetah end to end on the suite's emulation: a cookie VIP, stateless and stateful, keeps every
connection on its server while its pool grows and drains and an SMux is killed and restarted (a
short version of integration-tests/cheetah_bench.py's churn; the switches are not drained here,
the other tests need the placement they settled on). The restarted SMux is an owner of the
stateful VIP with an empty ConnTable: the host agents re-report its connections (COOKIE-SPEC §7,
"Adoption"). A cheetah VIP with a UDP service, served by the QUIC server on its DIP hosts,
goes through the same churn with long-lived QUIC connections: the SMuxes place their packets by
the server id in their connection ids (COOKIE-SPEC §13)."""
import cheetah_exp as cx
from conftest import wait_quiet

COOKIE_VIP, HASH_VIP, STATEFUL_VIP, QUIC_VIP = "10.100.5.1", "10.100.5.2", "10.100.5.3", "10.100.5.4"


def test_cookie_vip_keeps_every_connection_through_pool_changes_and_an_smux_restart(emu, placed):
    cx.require_cookie_agents(emu)
    ips = cx.dip_ips(emu)
    cx.add_vip(emu, cx.vip_doc(COOKIE_VIP, 80, ips[:8], "cheetah", "rr"))
    cx.add_vip(emu, cx.vip_doc(STATEFUL_VIP, 80, ips[:8], "cheetah-stateful", "rr"))
    cx.add_vip(emu, cx.vip_doc(HASH_VIP, 80, ips[:8]))
    cx.add_vip(emu, cx.vip_doc(QUIC_VIP, cx.QUIC_PORT, ips[:8], "cheetah", "rr", proto="udp"))
    try:
        results, events, counters = cx.churn(emu, {"cheetah": COOKIE_VIP, "cheetah-stateful": STATEFUL_VIP,
                                                   "hash+table": HASH_VIP}, phase_s=6, conns=6, drain=False,
                                           quic={"cheetah-quic": QUIC_VIP})
        print("cheetah churn: %s\n%s\ncookie counters: %s" % (events, cx.churn_table(results), counters))
        # the SMuxes decoded the agents' cookies and kept stateful entries (no vacuous pass)
        assert counters["agentEncoded"] > 0 and counters["smuxDecoded"] > 0, counters
        assert counters["smuxStatefulInserted"] > 0, counters
        # the restarted owner got its connections back from the agents, none refused
        assert counters["smuxAdopted"] > 0 and counters["agentAdopted"] > 0, counters
        assert counters["smuxAdoptTaken"] == 0, counters
        for label in ("cheetah", "cheetah-stateful"):
            ck = results[label]
            assert ck["opened"] >= 60 and ck["connectFailed"] == 0, (label, ck, events)
            assert ck["broken"] == 0, (label, ck, events, counters)
            assert ck["shortFailed"] == 0, (label, ck, counters)
        # QUIC: every connection kept its server (placed by connection id, not by the pool's hash)
        ck = results["cheetah-quic"]
        assert ck["opened"] >= 60 and ck["connectFailed"] == 0, (ck, events)
        assert ck["broken"] == 0, (ck, events, counters)
        assert counters["smuxQuicDecoded"] > 0, counters
    finally:
        for vip in (COOKIE_VIP, STATEFUL_VIP, HASH_VIP, QUIC_VIP):
            emu.api("DELETE", "/vips/%s" % vip)
        wait_quiet(emu, 60)
