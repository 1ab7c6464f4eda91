"""How the client's packets reach whoever owns a connection now, and how no old
owner answers them with an RST (README.md, "Steering").

The front end calls, for one hand-off and back:
    lock(flow)              before it exports: no packet of the flow may reach a
                            socket until the next call (they are dropped; TCP resends)
    to_backend(flow, b, done)  steer to backend b, call done() once that is in force:
                            after the backend's IMPORTED (it waits for GO before it
                            sends), or, with `before_import`, in place of lock() before
                            the export (the backend serves at import)
    lock(flow)              the backend asks for the connection back
    to_frontend(flow)       the front end has imported it again
    forget(flow)            the connection is gone from this front end
A flow is (client address, client port, VIP, VIP port).

Mode a (AgentSteering): the front-end host's agent, through the steering map its
XDP program reads (bpf/prism_steer.bpf.h).  A fabric mode (an exact-match rule or
SMux pin installed by the controller, acknowledged before done()) plugs in here
with the same calls; done() is asynchronous for that reason."""
import handoff


class AgentSteering:
    """Mode a: the map pinned by this host's agent (--prism-pin-dir)."""

    name = "agent"

    def __init__(self, lib, pin_dir, before_import=False):
        """before_import: every backend's host agent runs with --prism-backend: it
        drops a flow's packets while no socket of the flow is ready there (none
        yet, or one still in repair mode), where its kernel would answer with an
        RST.  The front end then steers to the backend before it sends the state,
        and the backend serves at import.  Without it the backend waits for GO:
        steered only after IMPORTED, the client's ACKs of the first response
        segments would be dropped here, and an imported connection has no RTT
        sample yet, so the backend would wait for its initial 1 s retransmission
        timeout (measured: a 2 MB response at 100 Mbit/s took 1.35 s, not 0.17 s)."""
        self.map = handoff.SteerMap(lib, pin_dir)
        self.before_import = before_import

    def lock(self, flow):
        self.map.lock(flow)

    def to_backend(self, flow, backend, done):
        self.map.forward(flow, backend.address)
        done()

    def handoff_entry(self, flow, backend):
        """With before_import: the entry the front end's one-call hand-off
        (handoff.Lib.hand_off) writes in place of to_backend()."""
        return self.map.entry(flow, backend.address)

    def to_frontend(self, flow):
        self.map.delete(flow)

    def forget(self, flow):
        self.map.delete(flow)

    def counters(self):
        return self.map.counters()

    def close(self):
        self.map.close()
