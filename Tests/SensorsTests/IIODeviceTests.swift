import InputModel
@testable import Sensors
import Testing

@Suite("IIO devices from sysfs trees")
struct IIODeviceTests {
    @Test("channels from in_<type>[_<mod>]_{raw,input}, shared and per-channel scale, the mount matrix")
    func accelerometer() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let path = tree.device("bus/iio/devices/iio:device0", [
            "name": "accel_3d",
            "in_accel_x_raw": "10", "in_accel_y_raw": "-20", "in_accel_z_raw": "981",
            "in_accel_scale": "0.01",            // shared by the three axes…
            "in_accel_z_scale": "0.02",          // …but z has its own
            "in_accel_y_offset": "5",
            "in_accel_mount_matrix": "0, 1, 0; -1, 0, 0; 0, 0, 1",
            "in_accel_sampling_frequency": "100",   // an attribute, not a channel
            "in_voltage0_raw": "3",                 // a quantity evflow does not read
            "in_timestamp_raw": "1",
            "sampling_frequency_available": "10 100",
        ])
        let device = IIODevice(path: path)
        #expect(device.name == "accel_3d")
        #expect(device.polledChannels.map(\.channel) == ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) })
        #expect(device.polledChannels.map(\.attribute) == ["in_accel_x_raw", "in_accel_y_raw", "in_accel_z_raw"])
        #expect(device.polledChannels.map(\.conversion) == [
            ChannelConversion(scale: 0.01, offset: 0), ChannelConversion(scale: 0.01, offset: 5), ChannelConversion(scale: 0.02, offset: 0),
        ])
        let matrix = try #require(device.mountMatrix)
        #expect(matrix.rows == [[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
        #expect(matrix.apply((1, 2, 3)) == (2, -1, 3))
        #expect(device.scanElements.isEmpty && !device.hasBuffer)
        #expect(device.currentTrigger == nil)
    }

    @Test("classification by channel: the longest quantity name that is followed by the end, _ or a digit")
    func quantities() {
        #expect(IIODevice.quantity(ofChannel: "accel_x") == .accel)
        #expect(IIODevice.quantity(ofChannel: "illuminance0") == .illuminance)
        #expect(IIODevice.quantity(ofChannel: "intensity_both") == .intensity)
        #expect(IIODevice.quantity(ofChannel: "humidityrelative") == .humidityrelative)
        #expect(IIODevice.quantity(ofChannel: "temp_ambient") == .temp)
        #expect(IIODevice.quantity(ofChannel: "anglvel_z") == .anglvel)
        #expect(IIODevice.quantity(ofChannel: "magn_x") == .magn)
        #expect(IIODevice.quantity(ofChannel: "pressure") == .pressure)
        #expect(IIODevice.quantity(ofChannel: "proximity") == .proximity)
        #expect(IIODevice.quantity(ofChannel: "timestamp") == nil)
        #expect(IIODevice.quantity(ofChannel: "tempx") == nil)
        #expect(IIODevice.quantity(ofChannel: "voltage0") == nil)
        #expect(IIODevice.quantity(ofChannel: "rot_from_north_magnetic") == nil)
    }

    @Test("_input is preferred to _raw and is not scaled; thousandths become °C and %")
    func processed() {
        let tree = SysfsTree()
        defer { tree.remove() }
        let path = tree.device("iio:device3", [
            "name": "bme280",
            "in_temp_input": "23450", "in_temp_raw": "999", "in_temp_scale": "10",
            "in_humidityrelative_input": "45123",
            "in_pressure_input": "101.325",
            "in_illuminance_raw": "200", "in_illuminance_scale": "0.5", "in_illuminance_offset": "-10",
        ])
        let device = IIODevice(path: path)
        #expect(device.polledChannels.map(\.attribute) == ["in_humidityrelative_input", "in_illuminance_raw", "in_pressure_input", "in_temp_input"])
        let values = device.polledChannels.map { $0.conversion.physical(Double(tree.get("iio:device3/" + $0.attribute))!) }
        #expect(values == [45.123, 95, 101.325, 23.45])
        #expect(device.polledChannels.map(\.channel.unit) == ["%", "lx", "kPa", "°C"])
    }

    @Test("scan elements: _en, _index, _type, the timestamp; the layout of the known channels")
    func scanElements() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let path = tree.device("iio:device1", [
            "name": "gyro_3d", "dev": "239:1",
            "in_anglvel_scale": "0.001",
            "buffer/enable": "0", "buffer/length": "2",
            "trigger/current_trigger": "",
            "current_timestamp_clock": "realtime",
            "scan_elements/in_anglvel_x_en": "0", "scan_elements/in_anglvel_x_index": "0", "scan_elements/in_anglvel_x_type": "le:s32/32>>0",
            "scan_elements/in_anglvel_y_en": "1", "scan_elements/in_anglvel_y_index": "1", "scan_elements/in_anglvel_y_type": "le:s32/32>>0",
            "scan_elements/in_anglvel_z_en": "0", "scan_elements/in_anglvel_z_index": "2", "scan_elements/in_anglvel_z_type": "le:s32/32>>0",
            "scan_elements/in_voltage0_en": "0", "scan_elements/in_voltage0_index": "3", "scan_elements/in_voltage0_type": "le:u16/16>>0",
            "scan_elements/in_timestamp_en": "1", "scan_elements/in_timestamp_index": "4", "scan_elements/in_timestamp_type": "le:s64/64>>0",
        ])
        let device = IIODevice(path: path)
        #expect(device.hasBuffer)
        #expect(device.polledChannels.isEmpty)
        // voltage0 is listed (reading turns it off) but is no channel of the sensor.
        #expect(device.scanElements.map(\.element.name) == ["anglvel_x", "anglvel_y", "anglvel_z", "voltage0", "timestamp"])
        #expect(device.scanElements.map(\.enabled) == [false, true, false, false, true])
        #expect(device.scanElements.map { $0.channel != nil } == [true, true, true, false, false])
        #expect(device.scanElements[0].element.conversion == ChannelConversion(scale: 0.001))
        #expect(device.bufferedChannels.map(\.name) == ["anglvel_x", "anglvel_y", "anglvel_z"])
        #expect(device.timestampClock == "realtime")
        #expect(device.currentTrigger == "")
        let layout = try #require(device.layout(withTimestamp: true))
        #expect(layout.elements.map(\.offset) == [0, 4, 8, 16])
        #expect(layout.scanBytes == 24)
        #expect(try #require(device.layout(withTimestamp: false)).scanBytes == 12)
    }

    @Test("the trigger: the current one, else the device's own (<name>-dev<N>), else one named after it, else none")
    func triggers() {
        let tree = SysfsTree()
        defer { tree.remove() }
        _ = tree.device("bus/iio/devices/trigger0", ["name": "sysfstrig0"])
        _ = tree.device("bus/iio/devices/trigger1", ["name": "accel_3d-dev2"])
        _ = tree.device("bus/iio/devices/trigger2", ["name": "als-trigger"])
        let accel = IIODevice(path: tree.device("bus/iio/devices/iio:device2", ["name": "accel_3d", "trigger/current_trigger": ""]))
        #expect(accel.chooseTrigger(sysfsRoot: tree.root) == .set("accel_3d-dev2"))
        let light = IIODevice(path: tree.device("bus/iio/devices/iio:device5", ["name": "als", "trigger/current_trigger": ""]))
        #expect(light.chooseTrigger(sysfsRoot: tree.root) == .set("als-trigger"))
        let set = IIODevice(path: tree.device("bus/iio/devices/iio:device6", ["name": "magn", "trigger/current_trigger": "sysfstrig0"]))
        #expect(set.chooseTrigger(sysfsRoot: tree.root) == .current("sysfstrig0"))
        let orphan = IIODevice(path: tree.device("bus/iio/devices/iio:device7", ["name": "baro", "trigger/current_trigger": ""]))
        #expect(orphan.chooseTrigger(sysfsRoot: tree.root) == .unavailable)
        let fifo = IIODevice(path: tree.device("bus/iio/devices/iio:device8", ["name": "imu"]))
        #expect(fifo.chooseTrigger(sysfsRoot: tree.root) == .notNeeded)
    }

    @Test("describe: buffered when a buffer, a node and a trigger are there; polled otherwise, and without a trigger")
    func plans() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let buffered: [String: String] = [
            "name": "accel_3d", "in_accel_x_raw": "1", "in_accel_scale": "0.1",
            "buffer/enable": "0", "trigger/current_trigger": "",
            "scan_elements/in_accel_x_en": "0", "scan_elements/in_accel_x_index": "0", "scan_elements/in_accel_x_type": "le:s16/16>>0",
        ]
        tree.set("dev/iio:device0", "")   // regular files standing for the nodes
        tree.set("dev/iio:device1", "")
        let noTrigger = IIODevice(path: tree.device("bus/iio/devices/iio:device0", buffered))
        let options = SensorMonitor.Options(sysfsRoot: tree.root)
        let polled = try #require(SensorMonitor.describe(noTrigger, sysname: "iio:device0", devnode: tree.root + "/dev/iio:device0", properties: [:], options: options))
        #expect(polled.plan == .polled && !polled.info.buffered)
        _ = tree.device("bus/iio/devices/trigger0", ["name": "accel_3d-dev1"])
        let withTrigger = IIODevice(path: tree.device("bus/iio/devices/iio:device1", buffered))
        let read = try #require(SensorMonitor.describe(withTrigger, sysname: "iio:device1", devnode: tree.root + "/dev/iio:device1", properties: [:], options: options))
        #expect(read.plan == .buffered(trigger: "accel_3d-dev1") && read.info.buffered)
        #expect(read.info.channels == [SensorChannel(name: "accel_x", quantity: .accel)])
        let noNode = try #require(SensorMonitor.describe(withTrigger, sysname: "iio:device1", devnode: nil, properties: [:], options: options))
        #expect(noNode.plan == .polled)
        // A node this process cannot read (here: not there at all) means polling, not a
        // buffer that fails when its samples are subscribed.
        let unreadable = try #require(SensorMonitor.describe(withTrigger, sysname: "iio:device1", devnode: tree.root + "/dev/nothing", properties: [:], options: options))
        #expect(unreadable.plan == .polled)
        let noPreference = SensorMonitor.Options(preferBuffer: false, sysfsRoot: tree.root)
        #expect(SensorMonitor.describe(withTrigger, sysname: "iio:device1", devnode: tree.root + "/dev/iio:device1", properties: [:], options: noPreference)?.plan == .polled)
        let nothing = IIODevice(path: tree.device("bus/iio/devices/iio:device9", ["name": "adc", "in_voltage0_raw": "1"]))
        #expect(SensorMonitor.describe(nothing, sysname: "iio:device9", devnode: nil, properties: [:], options: options) == nil)
        // The id follows the hardware, not the number the kernel gave it this time.
        #expect(SensorMonitor.sensorID(name: "als", properties: ["ID_PATH": "platform-x"], syspath: "/sys/devices/a/iio:device0")
                == SensorMonitor.sensorID(name: "als", properties: ["ID_PATH": "platform-x"], syspath: "/sys/devices/a/iio:device4"))
        #expect(SensorMonitor.sensorID(name: "als", properties: [:], syspath: "/sys/devices/a/iio:device0")
                != SensorMonitor.sensorID(name: "als", properties: [:], syspath: "/sys/devices/b/iio:device0"))
    }

    @Test("a proximity sensor's near level from sysfs in_proximity_nearlevel (vcnl4000's); absent, 0 or on another sensor: none")
    func proximityNearLevel() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let describe = { (path: String) in
            SensorMonitor.describe(IIODevice(path: path), sysname: "iio:device0", devnode: nil, properties: [:], options: .init())?.info
        }
        let prox = tree.device("iio:device0", ["name": "vcnl4000", "in_proximity_raw": "12", "in_illuminance_raw": "40",
                                               "in_proximity_nearlevel": "220\n"])
        #expect(IIODevice(path: prox).proximityNearLevel == 220)
        #expect(try #require(describe(prox)).proximityNearLevel == 220)
        let without = tree.device("iio:device1", ["name": "prox", "in_proximity_raw": "12"])
        #expect(try #require(describe(without)).proximityNearLevel == nil)
        let zero = tree.device("iio:device2", ["name": "prox", "in_proximity_raw": "12", "in_proximity_nearlevel": "0"])
        #expect(try #require(describe(zero)).proximityNearLevel == nil, "0 is no level (iio-sensor-proxy's test too)")
        let light = tree.device("iio:device3", ["name": "als", "in_illuminance_raw": "40", "in_proximity_nearlevel": "220"])
        #expect(try #require(describe(light)).proximityNearLevel == nil, "only a sensor with a proximity channel has one")
    }

    @Test("the mount matrix as iio-sensor-proxy chooses it: udev's ACCEL_MOUNT_MATRIX over sysfs, a bad one passed over")
    func mountMatrixPrecedence() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let path = tree.device("bus/iio/devices/iio:device0", [
            "name": "accel_3d", "in_accel_x_raw": "0", "in_accel_y_raw": "0", "in_accel_z_raw": "0",
            "in_accel_mount_matrix": "0, 1, 0; -1, 0, 0; 0, 0, 1",
        ])
        let device = IIODevice(path: path)
        let hwdb = "1, 0, 0; 0, -1, 0; 0, 0, 1"   // the Asus T100TA's, from 60-sensor.hwdb
        let describe = { (properties: [String: String]) in
            SensorMonitor.describe(device, sysname: "iio:device0", devnode: nil, properties: properties, options: .init())?.info
        }
        let fromUdev = try #require(describe(["ACCEL_MOUNT_MATRIX": hwdb]))
        #expect(fromUdev.mountMatrix == MountMatrix(parsing: hwdb) && fromUdev.mountMatrixSource == .udev)
        let fromSysfs = try #require(describe([:]))
        #expect(fromSysfs.mountMatrix?.rows == [[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
        #expect(fromSysfs.mountMatrixSource == .accelMountMatrix)
        let badUdev = try #require(describe(["ACCEL_MOUNT_MATRIX": "1, 0, 0; 0, 0, 0; 0, 0, 1"]))
        #expect(badUdev.mountMatrixSource == .accelMountMatrix)
    }

    @Test("mount matrices: the kernel's text, malformed ones refused")
    func mountMatrix() {
        #expect(MountMatrix(parsing: "1, 0, 0; 0, 1, 0; 0, 0, 1\n") == .identity)
        #expect(MountMatrix(parsing: "-1,0,0;0,-1,0;0,0,1")?.rows == [[-1, 0, 0], [0, -1, 0], [0, 0, 1]])
        #expect(MountMatrix(parsing: "0.7071, 0.7071, 0; -0.7071, 0.7071, 0; 0, 0, 1")?.rows[0] == [0.7071, 0.7071, 0])
        for bad in ["", "1, 0, 0; 0, 0, 0; 0, 0, 1", "1, 0, 0; 0, 1, 0", "1, 0; 0, 1; 0, 0", "a, 0, 0; 0, 1, 0; 0, 0, 1", "1, 0, 0; 0, 1, 0; 0, 0, 1; 0, 0, 0"] {
            #expect(MountMatrix(parsing: bad) == nil, "\(bad)")
        }
    }
}
