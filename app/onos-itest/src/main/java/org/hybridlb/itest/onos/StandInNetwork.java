package org.hybridlb.itest.onos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.onlab.packet.ChassisId;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.Device;
import org.onosproject.net.DefaultDevice;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.Config;
import org.onosproject.net.config.ConfigFactory;
import org.onosproject.net.provider.ProviderId;

/**
 * The network the stand-in ONOS knows: one available OpenFlow switch, and the app's network
 * configuration naming it and one SMux, handed to the app's own {@link Config} class through
 * ONOS's Jackson as ONOS's NetworkConfigManager does.
 */
public final class StandInNetwork {
    public static final String DEVICE = "of:0000000000000001";
    public static final String SWITCH_ID = "tor-0-0";
    public static final String SMUX_ID = "smux-1";
    /** {@code apps/org.hybridlb.app/hybridlb}. An SMux control URL on a closed port: the SMux is down. */
    static final String APP_CONFIG = "{\"switches\": {\"" + DEVICE + "\": {\"id\": \"" + SWITCH_ID + "\", "
            + "\"role\": \"tor\", \"pod\": 0}}, \"smuxes\": [{\"id\": \"" + SMUX_ID + "\", \"ip\": \"10.1.0.3\", "
            + "\"tor\": \"" + SWITCH_ID + "\", \"capacityBps\": 1e10, \"controlUrl\": \"http://127.0.0.1:1\"}]}";

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final Device device = new DefaultDevice(new ProviderId("of", "org.onosproject.provider.openflow"),
            DeviceId.deviceId(DEVICE), Device.Type.SWITCH, "Nicira, Inc.", "Open vSwitch", "2.17.9", "None",
            new ChassisId(1));

    /** DeviceService. */
    public final class Devices {
        public Iterable<Device> getDevices() {
            return List.of(device);
        }

        public Iterable<Device> getAvailableDevices() {
            return List.of(device);
        }

        public int getDeviceCount() {
            return 1;
        }

        public Device getDevice(DeviceId id) {
            return device.id().equals(id) ? device : null;
        }

        public boolean isAvailable(DeviceId id) {
            return device.id().equals(id);
        }
    }

    /** NetworkConfigRegistry: the registered config factories; the app's configuration. */
    public static final class NetworkConfig {
        private final Map<Class<?>, ConfigFactory<?, ?>> factories = new ConcurrentHashMap<>();

        public void registerConfigFactory(ConfigFactory<?, ?> factory) {
            factories.put(factory.configClass(), factory);
        }

        public void unregisterConfigFactory(ConfigFactory<?, ?> factory) {
            factories.remove(factory.configClass(), factory);
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        public Config getConfig(Object subject, Class configClass) {
            ConfigFactory factory = factories.get(configClass);
            if (factory == null || !(subject instanceof ApplicationId)
                    || !"org.hybridlb.app".equals(((ApplicationId) subject).name())) {
                return null;
            }
            Config config = factory.createConfig();
            config.init(subject, factory.configKey(), json(APP_CONFIG), MAPPER, null);
            return config;
        }

        private static JsonNode json(String text) {
            try {
                return MAPPER.readTree(text);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
