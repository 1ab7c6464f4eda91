"""A minimal P4Runtime client over real gRPC (the p4runtime package's stubs): one
StreamChannel for arbitration, SetForwardingPipelineConfig, Write, Read.  Used by the
tests, the benchmark and the emulation to program hlb-p4switch (and any P4Runtime
switch running a hybridlb program)."""
import os
import queue
import sys
import threading

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
import grpc  # noqa: E402
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "model"))
import p4rt_build  # noqa: E402
from p4rt_server import status_details  # noqa: E402,F401  (re-exported: the tests use it)

ARBITRATION_TIMEOUT = 10.0
# A failed Write carries one p4.v1.Error per update in its trailing metadata: large
# batches need more than gRPC's default 16 KiB.
CHANNEL_OPTIONS = [("grpc.max_metadata_size", 16 * 1024 * 1024),
                   ("grpc.max_receive_message_length", 64 * 1024 * 1024)]


class P4RuntimeClient:
    def __init__(self, address, device_id=1, election_id=1, profile=None):
        self.channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.device_id = device_id
        self.election_id = election_id
        self.profile = profile
        self.b = p4rt_build.Builder(p4rt_build.load_p4info(profile)) if profile else None
        self._out = queue.Queue()
        self.inbox = queue.Queue()       # StreamMessageResponses, and the final RpcError
        self._stream = None

    # ------------------------------------------------------------ stream
    def open_stream(self, election_id=None):
        """Opens the StreamChannel and sends an arbitration update; returns the first
        arbitration response (its status says primary OK / ALREADY_EXISTS / NOT_FOUND)."""
        if election_id is not None:
            self.election_id = election_id
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        threading.Thread(target=self._pump, daemon=True).start()
        self.arbitrate()
        return self.next_arbitration()

    def _pump(self):
        try:
            for msg in self._stream:
                self.inbox.put(msg)
        except grpc.RpcError as e:
            self.inbox.put(e)

    def arbitrate(self, election_id=None):
        if election_id is not None:
            self.election_id = election_id
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = self.device_id
        msg.arbitration.election_id.high = self.election_id >> 64
        msg.arbitration.election_id.low = self.election_id & (2**64 - 1)
        self._out.put(msg)

    def next_arbitration(self, timeout=ARBITRATION_TIMEOUT):
        item = self.inbox.get(timeout=timeout)
        if isinstance(item, grpc.RpcError):
            raise item
        return item.arbitration

    def close(self):
        self._out.put(None)
        if self._stream is not None:
            self._stream.cancel()
        self.channel.close()

    def _eid(self, msg):
        msg.high, msg.low = self.election_id >> 64, self.election_id & (2**64 - 1)

    # ------------------------------------------------------------ RPCs
    def set_pipeline(self, profile=None, action="VERIFY_AND_COMMIT", p4info=None):
        profile = profile or self.profile
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        self._eid(req.election_id)
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action.Value(action)
        req.config.p4info.CopyFrom(p4info or p4rt_build.load_p4info(profile))
        req.config.cookie.cookie = 1
        self.stub.SetForwardingPipelineConfig(req)
        if self.b is None or profile != self.profile:
            self.profile = profile
            self.b = p4rt_build.Builder(p4rt_build.load_p4info(profile))

    def write(self, updates, atomicity="CONTINUE_ON_ERROR"):
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, updates=list(updates))
        self._eid(req.election_id)
        req.atomicity = p4runtime_pb2.WriteRequest.Atomicity.Value(atomicity)
        self.stub.Write(req)

    def insert(self, *msgs, **kw):
        self.write([self.b.update("INSERT", m) for m in msgs], **kw)

    def modify(self, *msgs, **kw):
        self.write([self.b.update("MODIFY", m) for m in msgs], **kw)

    def read(self, *msgs):
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id,
                                        entities=[self.b.entity(m) for m in msgs])
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def read_direct_counters(self, table_entry):
        """The table entries matching `table_entry`, with their direct counter data."""
        ent = self.b.entity(table_entry)
        ent.table_entry.counter_data.SetInParent()
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=[ent])
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def counter(self, name, index):
        e = self.read(self.b.counter_entry(name, index))[0].counter_entry
        return e.data.packet_count, e.data.byte_count
