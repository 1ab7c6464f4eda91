#!/usr/bin/env python3
"""Generates smux/tests/data/agent_decap_fixtures.txt: packets for the host
agent's decapsulators, built with scapy, each with the expected verdict and,
for decapsulated ones, the expected output frame.  agent_test_decap.c runs
every fixture through the XDP program (BPF_PROG_TEST_RUN) and through the
verdict function the user-space fallback uses.

The file starts with the policy both backends are given:
  @local A            this host's underlay address (--local-ip)
  @allow-mux PREFIX   allowed outer source (--allow-mux)
  @allow-vip PREFIX   allowed inner destination (--allow-vip)
then one line per fixture:  name verdict in_hex out_hex
verdict is the counter the packet must move (decap_ipip, decap_gre,
pass_not_encap, pass_not_local, drop_malformed, drop_bad_checksum,
drop_unknown_mux, drop_not_vip: hlb_decap.h); out_hex is '-' unless
decapsulated.  The decapsulated frame is the input's Ethernet header followed
by everything after the outer IP (+GRE) header.
"""
import os
import sys

from scapy.all import ARP, GRE, IP, IPv6, TCP, UDP, Ether, IPOption_NOP, Raw

MUX, HOST, CLIENT, VIP = "10.77.0.1", "10.77.0.2", "198.51.100.5", "10.200.0.10"
ALLOWED_MUXES = [MUX, "10.78.0.0/16"]
ALLOWED_VIPS = [VIP, "10.201.0.0/16"]
UNKNOWN_MUX = "10.66.0.1"   # can reach the DIP host, is no mux
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def inner_udp(dst=VIP):
    return IP(src=CLIENT, dst=dst, ttl=61) / UDP(sport=40000, dport=53) / Raw(b"hello-udp")


def inner_tcp(dst=VIP):
    return IP(src=CLIENT, dst=dst) / TCP(sport=40001, dport=80, flags="S", seq=1)


def decap(name, outer, inner, pad_to=None):
    pkt = ETH / outer / inner
    raw = bytes(pkt)
    if pad_to and len(raw) < pad_to:
        raw += b"\0" * (pad_to - len(raw))
    outer_len = len(bytes(outer))   # outer IP (+GRE) header, serialized alone
    out = raw[:14] + raw[14 + outer_len:]
    verdict = "decap_gre" if GRE in outer else "decap_ipip"
    return name, verdict, raw, out


def bad_outer_checksum(pkt):
    """The frame with its outer IPv4 header checksum off by one."""
    raw = bytearray(bytes(pkt))
    raw[24] ^= 0x01   # the outer checksum is bytes 24-25 of the frame
    return Raw(bytes(raw))


def fixed(name, verdict, pkt):
    return name, verdict, bytes(pkt), None


def fixtures():
    ipip = IP(src=MUX, dst=HOST, proto=4)
    gre = IP(src=MUX, dst=HOST)
    yield decap("ipip_udp", ipip, inner_udp())
    yield decap("ipip_tcp", ipip, inner_tcp())
    yield decap("gre_udp", gre / GRE(proto=0x0800), inner_udp())
    yield decap("gre_tcp", gre / GRE(proto=0x0800), inner_tcp())
    yield decap("gre_key", gre / GRE(proto=0x0800, key_present=1, key=0x1234), inner_tcp())
    yield decap("gre_csum_seq", gre / GRE(proto=0x0800, chksum_present=1, seqnum_present=1,
                                          seqence_number=7), inner_udp())
    yield decap("gre_csum_key_seq", gre / GRE(proto=0x0800, chksum_present=1, key_present=1,
                                              key=9, seqnum_present=1, seqence_number=7), inner_tcp())
    yield decap("ipip_outer_ip_options", IP(src=MUX, dst=HOST, proto=4,
                                            options=[IPOption_NOP()] * 4), inner_udp())
    yield decap("ipip_ethernet_padding", ipip, IP(src=CLIENT, dst=VIP) / UDP(sport=1, dport=2),
                pad_to=60)
    yield fixed("not_local_outer_dst", "pass_not_local", ETH / IP(src=MUX, dst="10.77.0.99", proto=4) / inner_udp())
    yield fixed("plain_udp", "pass_not_encap", ETH / inner_udp())
    yield fixed("arp", "pass_not_encap", ETH / ARP(psrc=MUX, pdst=HOST))
    yield fixed("ipv6", "pass_not_encap", ETH / IPv6() / UDP())
    yield fixed("gre_transparent_ethernet", "pass_not_encap", ETH / gre / GRE(proto=0x6558) / ETH / inner_udp())
    yield fixed("gre_version_1", "pass_not_encap", ETH / gre / GRE(proto=0x0800, version=1) / inner_udp())
    yield fixed("ipip_outer_fragment", "pass_not_encap", ETH / IP(src=MUX, dst=HOST, proto=4, flags="MF") / inner_udp())
    yield fixed("ipip_outer_later_fragment", "pass_not_encap", ETH / IP(src=MUX, dst=HOST, proto=4, frag=100) / inner_udp())
    yield fixed("ethernet_header_only", "pass_not_encap", Ether(src=ETH.src, dst=ETH.dst, type=0x0800))
    yield fixed("truncated_outer_ip", "pass_not_encap", Raw(bytes(ETH / ipip)[:24]))
    yield fixed("ipip_truncated_inner", "drop_malformed", ETH / ipip / Raw(b"\x45\x00"))
    yield fixed("gre_truncated_header", "drop_malformed", ETH / IP(src=MUX, dst=HOST, proto=47) / Raw(b"\x00\x00"))
    yield fixed("gre_truncated_optional_fields", "drop_malformed",
                ETH / IP(src=MUX, dst=HOST, proto=47) / Raw(b"\xb0\x00\x08\x00\x00\x00"))
    yield fixed("ipip_inner_not_ipv4", "drop_malformed", ETH / ipip / IPv6() / UDP())
    yield fixed("ipip_inner_bad_ihl", "drop_malformed", ETH / ipip / Raw(bytes(IP(src=CLIENT, dst=VIP, ihl=4) / UDP())))
    too_long = bytearray(bytes(IP(src=CLIENT, dst=VIP) / UDP() / Raw(b"x" * 8)))
    too_long[2:4] = (1000).to_bytes(2, "big")
    yield fixed("ipip_inner_longer_than_frame", "drop_malformed", ETH / ipip / Raw(bytes(too_long)))

    # Allow-lists: outer sources (muxes) and inner destinations (VIPs).
    yield decap("ipip_mux_in_allowed_prefix", IP(src="10.78.3.4", dst=HOST, proto=4), inner_udp())
    yield decap("gre_vip_in_allowed_prefix", gre / GRE(proto=0x0800), inner_tcp(dst="10.201.5.6"))
    yield fixed("ipip_unknown_mux", "drop_unknown_mux",
                ETH / IP(src=UNKNOWN_MUX, dst=HOST, proto=4) / inner_udp())
    yield fixed("gre_unknown_mux", "drop_unknown_mux",
                ETH / IP(src=UNKNOWN_MUX, dst=HOST) / GRE(proto=0x0800) / inner_tcp())
    yield fixed("ipip_inner_dst_is_the_host", "drop_not_vip", ETH / ipip / inner_udp(dst=HOST))
    yield fixed("gre_inner_dst_elsewhere", "drop_not_vip",
                ETH / gre / GRE(proto=0x0800) / inner_tcp(dst="192.0.2.99"))
    yield fixed("ipip_bad_outer_checksum", "drop_bad_checksum", bad_outer_checksum(ETH / ipip / inner_udp()))
    yield fixed("gre_bad_outer_checksum_ip_options", "drop_bad_checksum", bad_outer_checksum(
        ETH / IP(src=MUX, dst=HOST, options=[IPOption_NOP()] * 4) / GRE(proto=0x0800) / inner_udp()))
    # The rules apply in order (hlb_decap.h): the first that fails decides.
    yield fixed("unknown_mux_not_local", "pass_not_local",
                ETH / IP(src=UNKNOWN_MUX, dst="10.77.0.99", proto=4) / inner_udp(dst="192.0.2.99"))
    yield fixed("bad_checksum_unknown_mux", "drop_bad_checksum",
                bad_outer_checksum(ETH / IP(src=UNKNOWN_MUX, dst=HOST, proto=4) / inner_udp()))
    yield fixed("unknown_mux_not_vip", "drop_unknown_mux",
                ETH / IP(src=UNKNOWN_MUX, dst=HOST, proto=4) / inner_udp(dst="192.0.2.99"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "data", "agent_decap_fixtures.txt")
    with open(path, "w") as f:
        f.write("# Generated by smux/tests/agent_gen_decap_fixtures.py.\n")
        f.write(f"@local {HOST}\n")
        for p in ALLOWED_MUXES:
            f.write(f"@allow-mux {p}\n")
        for p in ALLOWED_VIPS:
            f.write(f"@allow-vip {p}\n")
        f.write("# name verdict in_hex out_hex\n")
        for name, verdict, raw, out in fixtures():
            f.write(f"{name} {verdict} {raw.hex()} {out.hex() if out is not None else '-'}\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
