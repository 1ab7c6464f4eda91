"""P4Runtime error codes (google.rpc.Code) and the canonical bytestring encoding, shared by
the switch state and its reader."""

# google.rpc.Code values (the canonical codes of p4.v1.Error and of gRPC).
OK, ABORTED = 0, 10
INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS = 3, 5, 6
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 7, 8, 9
UNIMPLEMENTED = 12


class P4RuntimeError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def encode_bytes(value):
    """The canonical bytestring (shortest, at least one byte) of an int."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
