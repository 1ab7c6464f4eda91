"""Packet captures on the client's link (tcpdump) and their checks (tshark):
RSTs the client received, sequence/acknowledgement continuity per connection
in both directions, whoever sent the segments, and (steering mode c) the servers'
timestamps as the client's PAWS check sees them and the server ids the client's
echoes name."""
import collections
import os
import subprocess
import sys
import tempfile
import time

import prism_testbed as pt

sys.path.insert(0, os.path.join(pt.SMUX, "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402  COOKIE-SPEC's model: s32


class Capture:
    def __init__(self, tb, snaplen=96):
        fd, self.path = tempfile.mkstemp(prefix="hlb-prism-", suffix=".pcap")
        os.close(fd)
        self.proc = tb.client.popen(["tcpdump", "-i", tb.if_client, "-s", str(snaplen), "-B", "32768",
                                     "-w", self.path, "tcp port 80"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # tcpdump says "listening on" once the socket is open.
        self.proc.stderr.readline()

    def stop(self, settle=0.3, timeout=10.0):
        """Stops once tcpdump has written what the kernel still held: the file
        has not grown for `settle` seconds."""
        deadline = time.monotonic() + timeout
        size, since = -1, time.monotonic()
        while time.monotonic() < deadline:
            now_size = os.path.getsize(self.path)
            if now_size != size:
                size, since = now_size, time.monotonic()
            elif time.monotonic() - since >= settle:
                break
            time.sleep(0.05)
        pt.tl.stop_pid(self.proc.pid)
        self.proc.wait(5)

    def fields(self, *names, display=None):
        cmd = ["tshark", "-r", self.path, "-n", "-T", "fields", "-E", "separator=,",
               "-o", "tcp.relative_sequence_numbers:FALSE", "-o", "tcp.analyze_sequence_numbers:FALSE"]
        if display:
            cmd += ["-Y", display]
        for n in names:
            cmd += ["-e", n]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return [line.split(",") for line in out.splitlines() if line]

    def resets_to_client(self):
        return len(self.fields("frame.number", display=f"tcp.flags.reset==1 && ip.dst=={pt.CLIENT_IP}"))

    def continuity(self, loss_before_capture=False):
        """Per direction of every connection: a segment starts at or before the
        highest sequence number sent so far (retransmissions) and never after it
        (no byte skipped), and acknowledgements never go backwards nor past what
        the other side sent.  With loss_before_capture (random loss on a link the
        segments cross before the client's), a segment may start past the highest
        sequence number seen, because what lies between was dropped on the way;
        then the violation is a hole that no later segment fills by the end of the
        capture.  Returns (segments checked, [violations])."""
        rows = self.fields("tcp.stream", "ip.src", "tcp.seq", "tcp.len", "tcp.flags.syn",
                           "tcp.flags.fin", "tcp.ack", "tcp.flags.ack", "tcp.flags.reset")
        nxt = {}                                  # (stream, src) -> next sequence number
        holes = collections.defaultdict(list)     # (stream, src) -> [(start, end)] not yet seen
        acked = collections.defaultdict(int)      # (stream, src) -> highest ack sent
        bad = []
        for stream, src, seq, length, syn, fin, ack, has_ack, rst in rows:
            key = (stream, src)
            seq, length, ack = int(seq), int(length), int(ack or 0)
            if rst in ("1", "True"):
                continue
            end = (seq + length + (syn in ("1", "True")) + (fin in ("1", "True"))) & 0xFFFFFFFF
            if key in nxt:
                if holes[key]:
                    holes[key] = _minus(holes[key], seq, end)
                if ((seq - nxt[key]) & 0xFFFFFFFF) < 0x80000000 and seq != nxt[key]:
                    if loss_before_capture:
                        holes[key].append((nxt[key], seq))
                    else:
                        bad.append(f"stream {stream} from {src}: gap, seq {seq} after next {nxt[key]}")
                if ((end - nxt[key]) & 0xFFFFFFFF) < 0x80000000:
                    nxt[key] = end
            else:
                nxt[key] = end
            if has_ack in ("1", "True"):
                prev = acked.get(key)
                if prev is not None and ((ack - prev) & 0xFFFFFFFF) >= 0x80000000:
                    bad.append(f"stream {stream} from {src}: ack went back {prev} -> {ack}")
                other = [v for (s, a), v in nxt.items() if s == stream and a != src]
                if other and ((ack - other[0]) & 0xFFFFFFFF) not in (0,) and \
                        ((ack - other[0]) & 0xFFFFFFFF) < 0x80000000:
                    bad.append(f"stream {stream} from {src}: ack {ack} beyond sent {other[0]}")
                acked[key] = ack
        for (stream, src), left in holes.items():
            bad += [f"stream {stream} from {src}: bytes {a}-{b} never seen" for a, b in left]
        return len(rows), bad

    def timestamps(self):
        """Per connection, the TCP timestamps on the capture: [(from the client?,
        TSval, TSecr, client port)] in capture order."""
        rows = self.fields("tcp.stream", "ip.src", "tcp.srcport", "tcp.dstport",
                           "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr",
                           display="tcp.options.timestamp.tsval")
        out = collections.defaultdict(list)
        for stream, src, sport, dport, tsval, tsecr in rows:
            from_client = src == pt.CLIENT_IP
            out[stream].append((from_client, int(tsval), int(tsecr), int(sport if from_client else dport)))
        return out

    def paws_regressions(self):
        """Server segments the client's PAWS check drops: Linux drops a TSval when
        s32(newest it holds - TSval) > 1 (TCP_PAWS_WINDOW; RFC 7323 §5).  Returns
        (server segments checked, [(stream, newest, tsval)])."""
        n, bad = 0, []
        for stream, segs in self.timestamps().items():
            newest = None
            for from_client, tsval, _tsecr, _port in segs:
                if from_client:
                    continue
                n += 1
                if newest is not None and cc.s32(newest - tsval) > 1:
                    bad.append((stream, newest, tsval))
                elif newest is None or cc.s32(tsval - newest) > 0:
                    newest = tsval
        return n, bad

    def close(self):
        os.unlink(self.path)


def _minus(holes, start, end):
    """The sequence ranges of holes that [start, end) does not cover (mod 2^32)."""
    out = []
    for a, b in holes:
        # Offsets from the hole's start: the segment covers [lo, hi) of [0, b - a).
        size, lo = (b - a) & 0xFFFFFFFF, (start - a) & 0xFFFFFFFF
        hi = (end - a) & 0xFFFFFFFF
        if lo >= 0x80000000:      # the segment starts before the hole
            lo = 0
        if hi >= 0x80000000 or hi <= lo or lo >= size:
            out.append((a, b))    # ends before the hole, starts after it, or is empty
            continue
        hi = min(hi, size)
        if lo > 0:
            out.append((a, (a + lo) & 0xFFFFFFFF))
        if hi < size:
            out.append(((a + hi) & 0xFFFFFFFF, b))
    return out
