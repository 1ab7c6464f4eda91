"""Packet captures on the client's link (tcpdump) and their checks (tshark):
RSTs the client received, and sequence/acknowledgement continuity per connection
in both directions, whoever sent the segments."""
import collections
import os
import subprocess
import tempfile
import time

import prism_testbed as pt


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

    def continuity(self):
        """Per direction of every connection: a segment starts at or before the
        highest sequence number sent so far (retransmissions) and never after it
        (no byte skipped), and acknowledgements never go backwards nor past what
        the other side sent.  Returns (segments checked, [violations])."""
        rows = self.fields("tcp.stream", "ip.src", "tcp.seq", "tcp.len", "tcp.flags.syn",
                           "tcp.flags.fin", "tcp.ack", "tcp.flags.ack", "tcp.flags.reset")
        nxt = {}                                  # (stream, src) -> next sequence number
        acked = collections.defaultdict(int)      # (stream, src) -> highest ack sent
        bad = []
        for stream, src, seq, length, syn, fin, ack, has_ack, rst in rows:
            key = (stream, src)
            seq, length, ack = int(seq), int(length), int(ack or 0)
            if rst in ("1", "True"):
                continue
            end = (seq + length + (syn in ("1", "True")) + (fin in ("1", "True"))) & 0xFFFFFFFF
            if key in nxt:
                if ((seq - nxt[key]) & 0xFFFFFFFF) < 0x80000000 and seq != nxt[key]:
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
        return len(rows), bad

    def close(self):
        os.unlink(self.path)
