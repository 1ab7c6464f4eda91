package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import org.hybridlb.app.onos.fabric.HmuxCapability;
import org.junit.Test;
import org.onosproject.net.NetTestTools;

/** Devices whose ONOS driver lacks the Nicira set-tunnel-destination extension, found up front. */
public class HmuxCapabilityTest {
    @Test
    public void theOvsDriverCanAndTheDefaultOneCannotWithTheFix() {
        FakeOnos onos = new FakeOnos();
        onos.device("tor1");
        onos.device("tor2");
        onos.drivers.notOvs.add(NetTestTools.did("tor2"));
        HmuxCapability c = new HmuxCapability(onos.drivers, onos.devices);
        assertNull(c.problem(NetTestTools.did("tor1")));
        org.onosproject.net.Device d = onos.devices.getDevice(NetTestTools.did("tor2"));
        assertEquals("of:tor2 cannot be an HMux: its ONOS driver \"default\" has no Nicira set-tunnel-destination"
                + " extension (device: " + d.manufacturer() + " " + d.hwVersion() + " " + d.swVersion() + ")."
                + " ONOS 2.7 gives its \"ovs\" driver to Open vSwitch 2.x only; for Open vSwitch 3.x set it in the"
                + " network configuration: {\"devices\": {\"of:tor2\": {\"basic\": {\"driver\": \"ovs\"}}}}",
                c.problem(NetTestTools.did("tor2")));
    }
}
