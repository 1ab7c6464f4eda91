"""Reference model of the Cheetah cookie (p4/COOKIE-SPEC.md), pure Python.

Every implementation (host agent eBPF, SMux, controller, P4 model) is checked
against vectors this module writes (p4/vectors/cookie_vectors.csv); the section
numbers below are those of COOKIE-SPEC.md.
"""
import ipaddress
import struct

# §2 wire layout of TSval (and of the TSecr that echoes it)
COOKIE_BITS = 15
COOKIE_MASK = (1 << COOKIE_BITS) - 1
LOW_BITS = 16
LOW_MASK = (1 << LOW_BITS) - 1
VERSION_SHIFT = 31
COOKIE_SHIFT = 16

# §4 identity carried by the cookie
STATEFUL_FLAG = 1 << 14
SERVER_ID_MAX = (1 << 14) - 1      # server ids 1..16383; 0 is never allocated
OWNER_BITS = 4
INDEX_BITS = 10
OWNER_MAX = (1 << OWNER_BITS) - 1
INDEX_MAX = (1 << INDEX_BITS) - 1

# §7 a stateful SMux hands the ident to the host in the SYN's TSecr
SYN_HINT_MAGIC = 0xCEE7

HASH_MODES = ("siphash13", "crc32c")
IPPROTO_TCP = 6
U32 = 0xFFFFFFFF
U64 = 0xFFFFFFFFFFFFFFFF


# ---------------------------------------------------------------- §3 tuple
def tuple_bytes(vip, vip_port, client, client_port, proto=IPPROTO_TCP):
    """The 13 hashed bytes, in p4/HASH-SPEC.md §1 order with the VIP as destination:
    VIP(4) | proto(1) | VIP port(2) | client(4) | client port(2), network order."""
    return (ipaddress.IPv4Address(vip).packed + struct.pack("!BH", proto, vip_port)
            + ipaddress.IPv4Address(client).packed + struct.pack("!H", client_port))


# ---------------------------------------------------------------- §5 hashes
def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & U64


def _sipround(v0, v1, v2, v3):
    v0 = (v0 + v1) & U64
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & U64
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & U64
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & U64
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash(key, data, c_rounds=1, d_rounds=3):
    """SipHash-c-d of bytes `data` under the 16-byte `key`; the 64-bit result as an
    int (its little-endian bytes are the reference implementation's output)."""
    if len(key) != 16:
        raise ValueError("key: SipHash needs 16 bytes")
    k0, k1 = struct.unpack("<QQ", key)
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    tail = len(data) % 8
    blocks = [struct.unpack_from("<Q", data, i)[0] for i in range(0, len(data) - tail, 8)]
    last = (len(data) & 0xFF) << 56
    for i, b in enumerate(data[len(data) - tail:]):
        last |= b << (8 * i)
    for m in blocks + [last]:
        v3 ^= m
        for _ in range(c_rounds):
            v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
        v0 ^= m
    v2 ^= 0xFF
    for _ in range(d_rounds):
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli), as p4/HASH-SPEC.md §2."""
    c = U32
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ U32


def cookie_hash(mode, key, tup):
    """§5: the keyed hash of a 13-byte tuple; its low 15 bits mask the ident."""
    if mode == "siphash13":
        return siphash(key, tup, 1, 3)
    if mode == "crc32c":
        return crc32c(key + tup)
    raise ValueError(f"mode: expected one of {HASH_MODES}, got {mode!r}")


# ---------------------------------------------------------------- §4 idents
def stateful_ident(owner, index):
    if not 0 <= owner <= OWNER_MAX or not 0 <= index <= INDEX_MAX:
        raise ValueError(f"owner/index out of range: {owner}, {index}")
    return STATEFUL_FLAG | owner << INDEX_BITS | index


def split_ident(ident):
    """-> ("server", id) or ("stateful", owner, index)."""
    if ident & STATEFUL_FLAG:
        return ("stateful", (ident >> INDEX_BITS) & OWNER_MAX, ident & INDEX_MAX)
    return ("server", ident)


def make_cookie(mode, key, tup, ident):
    if not 0 <= ident <= COOKIE_MASK:
        raise ValueError(f"ident: 15 bits, got {ident}")
    return (ident ^ cookie_hash(mode, key, tup)) & COOKIE_MASK


def decode_ident(mode, key, tup, cookie):
    return (cookie ^ cookie_hash(mode, key, tup)) & COOKIE_MASK


# ---------------------------------------------------------------- §2, §6 wire
def encode_tsval(tsval, cookie):
    """Original TSval -> TSval on the wire: version (bit 16 of the original) |
    cookie | the 16 low bits."""
    version = (tsval >> LOW_BITS) & 1
    return version << VERSION_SHIFT | (cookie & COOKIE_MASK) << COOKIE_SHIFT | tsval & LOW_MASK


def cookie_of(wire):
    """The cookie bits of a wire TSval, or of the TSecr that echoes it."""
    return (wire >> COOKIE_SHIFT) & COOKIE_MASK


def restore_tsecr(wire_tsecr, last_sent):
    """§6: the original TSval that `wire_tsecr` echoes, given the newest original
    TSval the host has sent on the connection.  Exact for every echo in
    (last_sent - 2**17, last_sent]."""
    version = wire_tsecr >> VERSION_SHIFT
    hi = last_sent >> LOW_BITS
    hi = (hi - ((hi ^ version) & 1)) & LOW_MASK
    cand = hi << LOW_BITS | wire_tsecr & LOW_MASK
    if s32(cand - last_sent) > 0:              # cannot echo what was never sent
        cand = (cand - (1 << (LOW_BITS + 1))) & U32
    return cand


def s32(x):
    x &= U32
    return x - (1 << 32) if x & 0x80000000 else x


# ---------------------------------------------------------------- §7 SYN hint
def syn_hint(ident):
    """TSecr a stateful SMux writes into a client SYN for the DIP host."""
    if not ident & STATEFUL_FLAG or ident > COOKIE_MASK:
        raise ValueError(f"ident: a stateful ident has bit 14 set, got {ident:#x}")
    return SYN_HINT_MAGIC << 16 | ident


def parse_syn_hint(tsecr):
    """The ident in a SYN's TSecr, or None when it carries no hint."""
    if tsecr >> 16 == SYN_HINT_MAGIC and tsecr & STATEFUL_FLAG and not tsecr & 0x8000:
        return tsecr & COOKIE_MASK
    return None


def parse_key(text):
    """A key as the configuration writes it: 32 hex digits (16 bytes)."""
    try:
        key = bytes.fromhex(text)
    except (TypeError, ValueError):
        key = b""
    if len(key) != 16:
        raise ValueError(f"key: expected 32 hex digits, got {text!r}")
    return key


# ---------------------------------------------------------------- §13 QUIC
# The server-chosen connection id: 2 cookie bytes, then a 6-byte nonce.
QUIC_CID_LEN = 8
QUIC_NONCE_LEN = 6
QUIC_FIELD_MASK = 0xFFFF
QUIC_MAX_CID_LEN = 20             # RFC 9000 §17.2: a v1 connection id is at most 20 bytes
IPPROTO_UDP = 17


def quic_tuple(vip, vip_port, nonce):
    """§13.2: the 13 hashed bytes of a QUIC connection id: VIP(4) | 17 | VIP port(2) |
    nonce(6), where a TCP tuple has the client's address and port."""
    if len(nonce) != QUIC_NONCE_LEN:
        raise ValueError(f"nonce: {QUIC_NONCE_LEN} bytes, got {len(nonce)}")
    return ipaddress.IPv4Address(vip).packed + struct.pack("!BH", IPPROTO_UDP, vip_port) + nonce


def quic_cid(mode, key, vip, vip_port, server_id, nonce):
    """§13.1: the connection id a server with `server_id` issues: the 16-bit field
    server_id XOR (H & 0xFFFF), big-endian, then the nonce."""
    if not 1 <= server_id <= SERVER_ID_MAX:
        raise ValueError(f"server_id: 1..{SERVER_ID_MAX}, got {server_id}")
    h = cookie_hash(mode, key, quic_tuple(vip, vip_port, nonce))
    return struct.pack("!H", (server_id ^ h) & QUIC_FIELD_MASK) + nonce


def quic_hash(mode, key, vip, vip_port, cid):
    """H of an 8-byte connection id's tuple (§13.2)."""
    return cookie_hash(mode, key, quic_tuple(vip, vip_port, cid[2:QUIC_CID_LEN]))


def quic_ident(mode, key, vip, vip_port, cid):
    """§13.3: the 16-bit ident an 8-byte connection id names; a server id only when
    1..16383 and a server of the VIP's pool."""
    if len(cid) != QUIC_CID_LEN:
        raise ValueError(f"cid: {QUIC_CID_LEN} bytes, got {len(cid)}")
    field = struct.unpack("!H", cid[:2])[0]
    return (field ^ quic_hash(mode, key, vip, vip_port, cid)) & QUIC_FIELD_MASK


def quic_initial_hash(key, dcid):
    """§13.4: where a long-header packet whose DCID names no server goes:
    CRC-32C(key | DCID)."""
    return crc32c(key + dcid)


def quic_initial_slot(h, weight_total):
    """§13.4: the slot of the pool's cumulative weights a handshake hash picks."""
    return (h * weight_total) >> 32
