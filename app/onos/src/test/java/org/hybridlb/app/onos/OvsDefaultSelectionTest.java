package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.onos.fabric.OvsDefaultSelection;
import org.junit.Test;

/** The core's "ovs" reaches the SMuxes as OVS's default (dp_hash) selection and reads back as "ovs". */
public class OvsDefaultSelectionTest {
    static final List<Bucket> EVEN = List.of(new Bucket("10.0.1.1", 1, null, 0), new Bucket("10.0.1.2", 63, null, 1));
    static final List<Bucket> SKEWED = List.of(new Bucket("10.0.1.1", 1, null, 0), new Bucket("10.0.1.2", 64, null, 1));

    @Test
    public void dpHashOnlyWithinSixtyFourSlots() {
        assertTrue("ceil(64 / 1) = 64 slots", OvsDefaultSelection.dpHashPossible(EVEN));
        assertFalse("65 slots: OVS falls back to its MAC hash", OvsDefaultSelection.dpHashPossible(SKEWED));
        assertTrue("no live bucket", OvsDefaultSelection.dpHashPossible(List.of(new Bucket("10.0.1.1", 0, null, 0))));
    }

    @Test
    public void tablesGoOutAsOvsDphashOrCrc32AndComeBackAsTheCoreSentThem() {
        FakeOnos onos = new FakeOnos();
        OvsDefaultSelection smux = new OvsDefaultSelection(onos.smuxes);
        SmuxTable core = SmuxTable.of(4, List.of(
                new VipEntry("100.64.0.1", null, List.of(new ServiceEntry("tcp", 80, EVEN))),
                new VipEntry("100.64.0.2", null, List.of(new ServiceEntry("tcp", 80, EVEN),
                        new ServiceEntry("udp", 53, SKEWED)))), "gre");
        smux.putTable("smux-1", core);
        SmuxTable sent = onos.smuxes.tables.get("smux-1");
        assertEquals("ovs-dphash", sent.vips.get(0).selection);
        assertEquals("crc32", sent.vips.get(1).selection);
        SmuxTable back = smux.getTable("smux-1");
        assertEquals("ovs", back.vips.get(0).selection);
        assertEquals("ovs", back.vips.get(1).selection);
        assertTrue(core.sameVips(back));
        assertFalse("what the SMux runs is not what the core wrote", core.sameVips(sent));
    }
}
