"""The P4Runtime service of the model switch (P4Runtime specification 1.x): client
arbitration on StreamChannel (election ids, one primary per device and role, the
spec's notifications), SetForwardingPipelineConfig checked against the P4Info of a
hybridlb program, Write with per-update errors and the three atomicity modes, Read
with wildcards.  One lock serialises writes and packets, so a batch is atomic for the
data plane whenever it is applied whole."""
import os
import queue
import sys
import threading

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
import grpc  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from google.rpc import code_pb2, status_pb2  # noqa: E402
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "model"))
import p4rt_build  # noqa: E402
import p4rt_state  # noqa: E402
import pipeline  # noqa: E402

API_VERSION = "1.3.0"
READ_CHUNK = 1000                       # entities per ReadResponse
GRPC_CODES = {c.value[0]: c for c in grpc.StatusCode}
STATUS_DETAILS_KEY = "grpc-status-details-bin"


class _Status(grpc.Status):
    """A gRPC status carrying a google.rpc.Status in its trailing metadata (what the
    grpcio-status package builds), for the per-update errors of a Write."""

    def __init__(self, code, message, details):
        self.code = GRPC_CODES[code]
        self.details = message
        self.trailing_metadata = ((STATUS_DETAILS_KEY, details.SerializeToString()),)


def known_programs():
    """{profile: P4Info} of the programs this switch can run."""
    return {p: p4rt_build.load_p4info(p) for p in pipeline.p4src.load_profiles()}


def _normalised(info):
    """The parts of a P4Info that decide what a program is (ids, names, widths, kinds)."""
    out = type(info)()
    out.CopyFrom(info)
    out.ClearField("pkg_info")
    out.ClearField("type_info")
    for items in (out.tables, out.actions, out.action_profiles, out.counters,
                  out.direct_counters, out.registers):
        for x in items:
            x.preamble.ClearField("annotations")
            x.preamble.ClearField("doc")
    return text_format.MessageToString(out)


class Device:
    """One P4 device: its program, state and pipeline (None until a pipeline is set)."""

    def __init__(self, device_id):
        self.device_id = device_id
        self.lock = threading.Lock()
        self.profile = None
        self.config = None              # the ForwardingPipelineConfig as committed
        self.saved = None               # VERIFY_AND_SAVE, waiting for COMMIT
        self.state = None
        self.pipe = None

    def process(self, frame, port):
        with self.lock:
            if self.pipe is None:
                return None
            return self.pipe.process(frame, port)


class Arbitration:
    """Controllers of the default role of one device (P4Runtime spec, "Client
    Arbitration and Controller Replication")."""

    def __init__(self):
        self.lock = threading.Lock()
        self.streams = {}               # stream key -> (election id int, outbound queue)
        self.primary = None             # stream key
        self.highest = None             # election_id_past

    @staticmethod
    def eid(msg):
        return msg.high << 64 | msg.low

    def _notify(self, key, device_id):
        eid, out = self.streams[key]
        m = p4runtime_pb2.StreamMessageResponse()
        a = m.arbitration
        a.device_id = device_id
        if self.highest is not None:
            a.election_id.high, a.election_id.low = self.highest >> 64, self.highest & (2**64 - 1)
        if self.primary == key:
            a.status.code = code_pb2.OK
        elif self.primary is not None:
            a.status.code = code_pb2.ALREADY_EXISTS
            a.status.message = "a primary controller exists"
        else:
            a.status.code = code_pb2.NOT_FOUND
            a.status.message = "no primary controller"
        out.put(m)

    def update(self, key, out, eid, device_id):
        """Applies a MasterArbitrationUpdate; returns an error (code, message) or None."""
        with self.lock:
            for other, (oeid, _) in self.streams.items():
                if other != key and oeid == eid:
                    return code_pb2.INVALID_ARGUMENT, f"election id {eid} is used by another controller"
            was_primary = self.primary == key
            self.streams[key] = (eid, out)
            if self.highest is None or eid >= self.highest:
                changed = self.primary != key
                self.primary, self.highest = key, eid
                targets = list(self.streams) if changed else [key]
            else:
                if was_primary:
                    self.primary = None
                targets = list(self.streams) if was_primary else [key]
            for t in targets:
                self._notify(t, device_id)
            return None

    def leave(self, key, device_id):
        with self.lock:
            if key not in self.streams:
                return
            del self.streams[key]
            if self.primary == key:
                self.primary = None
                for t in self.streams:
                    self._notify(t, device_id)

    def is_primary(self, eid):
        with self.lock:
            return self.primary is not None and self.streams[self.primary][0] == eid


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, device, programs=None):
        self.device = device
        self.arb = Arbitration()
        self.programs = programs or known_programs()
        self._norm = {p: _normalised(i) for p, i in self.programs.items()}

    # ------------------------------------------------------------ checks
    def _check_device(self, context, device_id):
        if device_id != self.device.device_id:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown device id {device_id}")

    def _check_role(self, context, role):
        if role:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "only the default role is supported")

    def _check_primary(self, context, election_id):
        if not self.arb.is_primary(Arbitration.eid(election_id)):
            context.abort(grpc.StatusCode.PERMISSION_DENIED,
                          "not the primary controller (election id does not match)")

    def _profile_of(self, p4info):
        text = _normalised(p4info)
        for profile, norm in self._norm.items():
            if norm == text:
                return profile
        return None

    # ------------------------------------------------------------ RPCs
    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, request, context):
        A = p4runtime_pb2.SetForwardingPipelineConfigRequest
        self._check_device(context, request.device_id)
        self._check_role(context, request.role)
        self._check_primary(context, request.election_id)
        dev = self.device
        if request.action == A.COMMIT:
            with dev.lock:
                if dev.saved is None:
                    context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no saved config to commit")
                self._commit(dev.saved)
                dev.saved = None
            return p4runtime_pb2.SetForwardingPipelineConfigResponse()
        if request.action not in (A.VERIFY, A.VERIFY_AND_SAVE, A.VERIFY_AND_COMMIT,
                                  A.RECONCILE_AND_COMMIT):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "action unspecified")
        profile = self._profile_of(request.config.p4info)
        if profile is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "the P4Info is not that of a hybridlb program (p4/p4info/"
                          f"{{{','.join(self.programs)}}}.p4info.txtpb)")
        if request.action == A.VERIFY:
            return p4runtime_pb2.SetForwardingPipelineConfigResponse()
        with dev.lock:
            if request.action == A.VERIFY_AND_SAVE:
                dev.saved = (profile, request.config)
            elif request.action == A.RECONCILE_AND_COMMIT and dev.profile != profile:
                context.abort(grpc.StatusCode.UNIMPLEMENTED,
                              "reconcile keeps state only for the running program")
            elif request.action == A.RECONCILE_AND_COMMIT:
                dev.config = request.config
            else:
                self._commit((profile, request.config))
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _commit(self, saved):
        profile, config = saved
        dev = self.device
        dev.profile, dev.config = profile, config
        dev.state = p4rt_state.SwitchState(self.programs[profile])
        dev.pipe = pipeline.HlbPipeline(dev.state, profile)

    def GetForwardingPipelineConfig(self, request, context):
        self._check_device(context, request.device_id)
        dev = self.device
        resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        with dev.lock:
            if dev.config is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline config set")
            resp.config.CopyFrom(dev.config)
        R = p4runtime_pb2.GetForwardingPipelineConfigRequest
        if request.response_type == R.P4INFO_AND_COOKIE:
            resp.config.ClearField("p4_device_config")
        elif request.response_type == R.COOKIE_ONLY:
            resp.config.ClearField("p4info")
            resp.config.ClearField("p4_device_config")
        elif request.response_type == R.DEVICE_CONFIG_AND_COOKIE:
            resp.config.ClearField("p4info")
        return resp

    def Write(self, request, context):
        self._check_device(context, request.device_id)
        self._check_role(context, request.role)
        self._check_primary(context, request.election_id)
        dev = self.device
        atomic = request.atomicity in (p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR,
                                       p4runtime_pb2.WriteRequest.DATAPLANE_ATOMIC)
        errors, undo, failed = [], [], False
        with dev.lock:
            if dev.state is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline config set")
            for update in request.updates:
                if failed and atomic:
                    errors.append((code_pb2.ABORTED, "not applied: an earlier update failed"))
                    continue
                try:
                    undo.append(dev.state.write(update))
                    errors.append((code_pb2.OK, ""))
                except p4rt_state.P4RuntimeError as e:
                    errors.append((e.code, e.message))
                    failed = True
            if failed and atomic:
                for u in reversed(undo):
                    u()
                errors = [(code_pb2.ABORTED, "rolled back") if c == code_pb2.OK else (c, m)
                          for c, m in errors]
        if failed:
            status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
            for code, message in errors:
                err = p4runtime_pb2.Error(canonical_code=code, message=message)
                status.details.add().Pack(err)
            context.abort_with_status(_Status(code_pb2.UNKNOWN, "Write failure.", status))
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):
        self._check_device(context, request.device_id)
        self._check_role(context, request.role)
        dev = self.device
        with dev.lock:
            if dev.state is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline config set")
            try:
                found = [e for ent in request.entities for e in dev.state.read(ent)]
            except p4rt_state.P4RuntimeError as e:
                context.abort(GRPC_CODES[e.code], e.message)
        for i in range(0, max(len(found), 1), READ_CHUNK):
            yield p4runtime_pb2.ReadResponse(entities=found[i:i + READ_CHUNK])

    def StreamChannel(self, request_iterator, context):
        out = queue.Queue()
        key = object()
        done = threading.Event()
        device_id = [None]

        def reader():
            try:
                for msg in request_iterator:
                    kind = msg.WhichOneof("update")
                    if kind == "arbitration":
                        a = msg.arbitration
                        if a.device_id != self.device.device_id:
                            out.put((grpc.StatusCode.NOT_FOUND, f"unknown device id {a.device_id}"))
                            return
                        if device_id[0] is not None and a.device_id != device_id[0]:
                            out.put((grpc.StatusCode.FAILED_PRECONDITION, "device id changed"))
                            return
                        if a.role.name:
                            out.put((grpc.StatusCode.UNIMPLEMENTED, "only the default role"))
                            return
                        device_id[0] = a.device_id
                        err = self.arb.update(key, out, Arbitration.eid(a.election_id), a.device_id)
                        if err:
                            out.put((GRPC_CODES[err[0]], err[1]))
                            return
                    elif device_id[0] is None:
                        out.put((grpc.StatusCode.FAILED_PRECONDITION,
                                 "the first message must be an arbitration update"))
                        return
                    else:                   # packet out, digest acks: no such feature here
                        resp = p4runtime_pb2.StreamMessageResponse()
                        resp.error.canonical_code = code_pb2.UNIMPLEMENTED
                        resp.error.message = f"{kind} is not supported by this program"
                        out.put(resp)
            except grpc.RpcError:
                pass                        # the client cancelled the stream (it closed, or died)
            finally:
                done.set()
                out.put(None)

        threading.Thread(target=reader, daemon=True).start()
        try:
            while True:
                item = out.get()
                if item is None:
                    if done.is_set():
                        return
                    continue
                if isinstance(item, tuple):
                    context.abort(item[0], item[1])
                yield item
        finally:
            if device_id[0] is not None:
                self.arb.leave(key, device_id[0])


def status_details(rpc_error):
    """The per-update p4.v1.Errors of a failed Write, [(code, message)]."""
    for k, v in rpc_error.trailing_metadata() or ():
        if k == STATUS_DETAILS_KEY:
            status = status_pb2.Status.FromString(v)
            out = []
            for d in status.details:
                err = p4runtime_pb2.Error()
                d.Unpack(err)
                out.append((err.canonical_code, err.message))
            return out
    return []
