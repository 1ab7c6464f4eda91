"""ctypes binding of libhlbprism.so: TCP hand-off (export / release / import /
reset) and the steering map the host agent pins.  The front end and the Python
test servers use it; the C backend library links the same code."""
import ctypes
import errno
import functools
import os
import socket
import struct

PRISM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BUILD = os.environ.get("HLB_PRISM_BUILD",
                               os.path.join(os.path.dirname(PRISM_DIR), "build-prism"))

# enum prism_steer_action / prism_steer_counter (include/hlb_prism.h)
STEER_LOCKED = 1
STEER_FORWARD = 2
COUNTER_NAMES = ("locked_drop", "forwarded", "unready_drop")
PIN_FLOWS, PIN_COUNTERS = "hlb_prism_flows", "hlb_prism_counters"


class HandoffError(OSError):
    pass


def _check(rc, what):
    if rc < 0:
        raise HandoffError(-rc, f"{what}: {os.strerror(-rc)}")
    return rc


class Lib:
    """The shared library, loaded once per process."""

    def __init__(self, build_dir=DEFAULT_BUILD):
        lib = ctypes.CDLL(os.path.join(build_dir, "libhlbprism.so"), use_errno=True)
        u8p = ctypes.POINTER(ctypes.c_uint8)
        lib.prism_export_blob.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                          ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_size_t)]
        lib.prism_handoff_blob.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                           ctypes.c_int, ctypes.c_uint16, ctypes.c_uint32,
                                           ctypes.c_int, ctypes.c_uint32, ctypes.c_uint16,
                                           ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint32,
                                           ctypes.c_uint32, ctypes.POINTER(ctypes.c_int),
                                           ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_size_t)]
        lib.prism_blob_free.argtypes = [u8p]
        lib.prism_blob_free.restype = None
        lib.prism_release.argtypes = [ctypes.c_int]
        lib.prism_import_blob.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_int), ctypes.c_char_p,
                                          ctypes.c_size_t]
        lib.prism_reset_blob.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.prism_steer_open.argtypes = [ctypes.c_char_p]
        lib.prism_steer_set.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint16,
                                        ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint32,
                                        ctypes.c_uint32]
        lib.prism_steer_delete.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint16,
                                           ctypes.c_uint32, ctypes.c_uint16]
        lib.prism_steer_counters.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
        lib.prism_cookie_enable.argtypes = [ctypes.c_char_p]
        self.lib = lib

    def cookie_enable(self, pin_dir):
        """Steering mode c: exports name this host's server id and imports make this
        host's agent write it into the connection's cookie (src/prism_cookie.h).
        pin_dir: where the agent pinned its cookie state (its --pin-dir).  Returns the
        server id; raises HandoffError when the maps are missing or cookies are off."""
        rc = self.lib.prism_cookie_enable(os.fsencode(pin_dir))
        if rc == 0:
            raise HandoffError(errno.ENOENT, f"{pin_dir}: the agent has no cookie configuration "
                                             "(no server id)")
        _check(rc, f"the agent's cookie maps in {pin_dir}")
        return rc

    def export(self, sock, prefix=b""):
        """Exports the connection of `sock` (a socket.socket) with `prefix` (bytes read
        but not consumed) in front of its receive queue.  Returns the encoded state;
        the socket stays in repair mode: release() it once its flow is locked."""
        out = ctypes.POINTER(ctypes.c_uint8)()
        n = ctypes.c_size_t()
        _check(self.lib.prism_export_blob(sock.fileno(), prefix, len(prefix), ctypes.byref(out),
                                          ctypes.byref(n)), "export")
        try:
            return ctypes.string_at(out, n.value)
        finally:
            self.lib.prism_blob_free(out)

    def hand_off(self, sock, prefix, ctl_sock, msg_type, conn_id, steer=None):
        """The front end's hand-off in one call: the steering entry `steer`
        ((map fd, key, action, owner DIP) from SteerMap.entry, or None), then export
        (with `prefix`), release, and the control message `msg_type` {state} on
        ctl_sock (blocking).  Returns (state, sent): the socket is closed, and sent
        is False when the control connection broke.  HandoffError when the steering
        write or the export failed: the socket is untouched."""
        out = ctypes.POINTER(ctypes.c_uint8)()
        n = ctypes.c_size_t()
        steer_failed = ctypes.c_int()
        map_fd, key, action, owner = steer if steer else (-1, (0, 0, 0, 0), 0, 0)
        rc = self.lib.prism_handoff_blob(sock.fileno(), prefix, len(prefix), ctl_sock.fileno(),
                                         msg_type, conn_id, map_fd, *key, action, owner,
                                         ctypes.byref(steer_failed), ctypes.byref(out),
                                         ctypes.byref(n))
        _check(rc, "steer" if steer_failed.value else "export")
        sock.detach()
        try:
            return ctypes.string_at(out, n.value), rc == 0
        finally:
            self.lib.prism_blob_free(out)

    def release(self, sock):
        """Closes an exported socket without sending anything."""
        fd = sock.detach()
        _check(self.lib.prism_release(fd), "release")

    def import_(self, blob):
        """Recreates the connection; returns a blocking socket.socket."""
        fd = ctypes.c_int(-1)
        err = ctypes.create_string_buffer(256)
        rc = self.lib.prism_import_blob(blob, len(blob), ctypes.byref(fd), err, len(err))
        if rc == -errno.EINVAL and err.value:
            raise HandoffError(errno.EINVAL, err.value.decode())
        _check(rc, "import")
        return socket.socket(fileno=fd.value)

    def reset_peer(self, blob):
        _check(self.lib.prism_reset_blob(blob, len(blob)), "reset")


@functools.lru_cache(maxsize=4096)   # the backends' DIPs
def _addr(dip):
    return struct.unpack("=I", socket.inet_aton(dip))[0]


class SteerMap:
    """The pinned steering map and its counters (mode a: the front-end host's agent)."""

    def __init__(self, lib, pin_dir):
        self.lib = lib.lib
        self.fd = _check(self.lib.prism_steer_open(os.path.join(pin_dir, PIN_FLOWS).encode()),
                         f"open {pin_dir}/{PIN_FLOWS}")
        self.counters_fd = _check(
            self.lib.prism_steer_open(os.path.join(pin_dir, PIN_COUNTERS).encode()),
            f"open {pin_dir}/{PIN_COUNTERS}")

    @staticmethod
    @functools.lru_cache(maxsize=65536)   # the flows of the connections held, about
    def _key(flow):
        client, cport, vip, vport = flow
        return (struct.unpack("=I", socket.inet_aton(client))[0], socket.htons(cport),
                struct.unpack("=I", socket.inet_aton(vip))[0], socket.htons(vport))

    def lock(self, flow):
        _check(self.lib.prism_steer_set(self.fd, *self._key(flow), STEER_LOCKED, 0), "steer lock")

    def forward(self, flow, dip):
        _check(self.lib.prism_steer_set(self.fd, *self.entry(flow, dip)[1], STEER_FORWARD,
                                        _addr(dip)), "steer forward")

    def entry(self, flow, dip):
        """The FORWARD entry of flow to dip, for Lib.hand_off."""
        return self.fd, self._key(flow), STEER_FORWARD, _addr(dip)

    def delete(self, flow):
        _check(self.lib.prism_steer_delete(self.fd, *self._key(flow)), "steer delete")

    def counters(self):
        out = (ctypes.c_uint64 * len(COUNTER_NAMES))()
        _check(self.lib.prism_steer_counters(self.counters_fd, out), "steer counters")
        return dict(zip(COUNTER_NAMES, out))

    def close(self):
        os.close(self.fd)
        os.close(self.counters_fd)
