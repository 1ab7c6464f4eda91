package org.hybridlb.app.onos.fabric;

import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.behaviour.ExtensionTreatmentResolver;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.Driver;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.instructions.ExtensionTreatment;
import org.onosproject.net.flow.instructions.ExtensionTreatmentType;

/**
 * Whether an ONOS device can serve as an HMux: a device running a hybridlb P4 program can; any other
 * device's driver must offer the Nicira
 * set-tunnel-destination extension ({@link ExtensionTreatmentResolver}), which every HMux
 * select-group bucket uses to send a connection to its DIP's host.
 *
 * <p>ONOS 2.7 gives its {@code ovs} driver, which has that behaviour, only to Open vSwitch 2.x
 * (the driver's {@code swVersion} pattern is {@code 2\..*}); Open vSwitch 3.x gets the
 * {@code default} driver, which has not, so every HMux placement on it failed and was rolled
 * back. Such a device is found here, before anything is placed on it: the fabric view gives it no
 * tunnel table entries (no VIP lands on it) and carries the reason, which names the fix.
 */
public final class HmuxCapability {
    private final DriverService drivers;
    private final DeviceService devices;
    private final P4Devices p4;

    public HmuxCapability(DriverService drivers, DeviceService devices) {
        this(drivers, devices, P4Devices.NONE);
    }

    /** @param p4 devices running a hybridlb P4 program: HMuxes by their pipeline, no extension needed */
    public HmuxCapability(DriverService drivers, DeviceService devices, P4Devices p4) {
        this.drivers = drivers;
        this.devices = devices;
        this.p4 = p4;
    }

    /** Null when {@code device} can be an HMux; otherwise why not and what to set. */
    public String problem(DeviceId device) {
        if (p4.profile(device).isPresent()) {
            return null;
        }
        try {
            ExtensionTreatment t = drivers.createHandler(device).behaviour(ExtensionTreatmentResolver.class)
                    .getExtensionInstruction(ExtensionTreatmentType.ExtensionTreatmentTypes.NICIRA_SET_TUNNEL_DST.type());
            if (t != null && ExtensionTreatmentType.ExtensionTreatmentTypes.NICIRA_SET_TUNNEL_DST.type().equals(t.type())) {
                return null;
            }
        } catch (RuntimeException e) {
            // the driver lacks the behaviour (ONOS throws), or the extension: the reason below
        }
        return device + " cannot be an HMux: its ONOS driver " + driverName(device)
                + " has no Nicira set-tunnel-destination extension" + describe(device)
                + ". ONOS 2.7 gives its \"ovs\" driver to Open vSwitch 2.x only; for Open vSwitch 3.x set it in the"
                + " network configuration: " + fix(device);
    }

    /** The netcfg that gives {@code device} ONOS's {@code ovs} driver. */
    public static String fix(DeviceId device) {
        return "{\"devices\": {\"" + device + "\": {\"basic\": {\"driver\": \"ovs\"}}}}";
    }

    private String driverName(DeviceId device) {
        try {
            Driver d = drivers.getDriver(device);
            return d == null ? "(none)" : "\"" + d.name() + "\"";
        } catch (RuntimeException e) {
            return "(none)";
        }
    }

    private String describe(DeviceId device) {
        Device d = devices.getDevice(device);
        if (d == null) {
            return "";
        }
        return " (device: " + d.manufacturer() + " " + d.hwVersion() + " " + d.swVersion() + ")";
    }
}
