"""Control messages between a front end and a backend (include/hlb_prism.h,
which is the definition; test_prism_units.py checks these constants against it)."""
import struct

MAGIC = 0x50524D31          # PRISM_WIRE_MAGIC, "PRM1"
VERSION = 1                 # PRISM_WIRE_VERSION
HDR = struct.Struct("!IHHII")   # magic, version, type, conn_id, len: PRISM_WIRE_HDR_LEN bytes
MAX_BODY = 64 << 20         # PRISM_WIRE_MAX_BODY

# enum prism_msg
HANDOFF, IMPORTED, GO, RECLAIM, LOCKED, RETURN, CLOSED, FAILED, ABORT, HANDOFF_HOLD = range(1, 11)
NAMES = {HANDOFF: "HANDOFF", IMPORTED: "IMPORTED", GO: "GO", RECLAIM: "RECLAIM",
         LOCKED: "LOCKED", RETURN: "RETURN", CLOSED: "CLOSED", FAILED: "FAILED", ABORT: "ABORT",
         HANDOFF_HOLD: "HANDOFF_HOLD"}


class WireError(ValueError):
    pass


def pack(msg_type, conn_id, body=b""):
    return HDR.pack(MAGIC, VERSION, msg_type, conn_id, len(body)) + body


def unpack_all(buf):
    """Complete messages at the front of buf: ([(type, conn_id, body)], rest)."""
    out = []
    view = memoryview(buf)
    off = 0
    while len(view) - off >= HDR.size:
        magic, version, msg_type, conn_id, length = HDR.unpack_from(view, off)
        if magic != MAGIC:
            raise WireError(f"control: bad magic {magic:#x}")
        if version != VERSION:
            raise WireError(f"control: unsupported version {version}")
        if msg_type not in NAMES:
            raise WireError(f"control: unknown message type {msg_type}")
        if length > MAX_BODY:
            raise WireError(f"control: body of {length} bytes exceeds {MAX_BODY}")
        if len(view) - off - HDR.size < length:
            break
        start = off + HDR.size
        out.append((msg_type, conn_id, bytes(view[start:start + length])))
        off = start + length
    return out, bytes(view[off:])
