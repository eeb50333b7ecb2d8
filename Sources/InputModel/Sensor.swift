/// What an IIO channel measures, from its sysfs name (`in_accel_x_raw` → `accel`), with the
/// unit its values are given in once the kernel's `_scale` and `_offset` are applied
/// (Documentation/ABI/testing/sysfs-bus-iio).
public enum SensorQuantity: String, Hashable, Sendable, Codable, CaseIterable {
    case accel, anglvel, illuminance, intensity, proximity, magn, pressure, temp, humidityrelative

    /// The values a working channel of this quantity gives, in `unit`: wide bounds (the
    /// widest common sensor ranges, sunlight's illuminance), so a value outside means the
    /// conversion is stale — a driver changed its `_scale` or `_offset` without a uevent —
    /// and the reader reads them again (docs/sensors.md, "Scale and offset").
    public var plausibleRange: ClosedRange<Double> {
        switch self {
        case .accel: -160...160                      // ±16 g
        case .anglvel: -70...70                      // ±4000 °/s
        case .illuminance: 0...200_000               // direct sunlight is about 100,000 lx
        case .intensity, .proximity: 0...Double.greatestFiniteMagnitude
        case .magn: -50...50                         // G; the Earth's field is about 0.5 G
        case .pressure: 0...2_000                    // kPa; the air at sea level is 101 kPa
        case .temp: -60...200                        // °C
        case .humidityrelative: -1...101             // %, with a sensor's overshoot
        }
    }

    /// The unit of a value in physical units.
    public var unit: String {
        switch self {
        case .accel: "m/s²"
        case .anglvel: "rad/s"
        case .illuminance: "lx"
        case .intensity: ""          // raw intensity: the kernel defines no unit
        case .proximity: ""          // raw proximity: larger is nearer, no unit
        case .magn: "G"
        case .pressure: "kPa"
        case .temp: "°C"             // the kernel's milli-degrees, scaled by 1/1000
        case .humidityrelative: "%"  // the kernel's milli-percent, scaled by 1/1000
        }
    }
}

/// One channel of a sensor: `accel_x`, `illuminance`, `temp`.
public struct SensorChannel: Hashable, Sendable, Codable {
    /// The channel's name without `in_` and the attribute suffix: `accel_x`, `illuminance`.
    public var name: String
    /// What it measures.
    public var quantity: SensorQuantity

    /// A channel named `name` measuring `quantity`.
    public init(name: String, quantity: SensorQuantity) {
        self.name = name
        self.quantity = quantity
    }

    /// The unit of its values.
    public var unit: String { quantity.unit }
}

/// An IIO sensor as evflowd describes it: its device, name and channels.
public struct SensorInfo: Hashable, Sendable, Codable {
    /// Stable across re-plugs, like an input device's (`DeviceID`), from the name and the
    /// udev properties that identify the hardware.
    public var id: DeviceID
    /// The IIO device's `name` attribute (`accel_3d`, `als`).
    public var name: String
    /// The kernel's name: `iio:device0`.
    public var sysname: String
    /// Its character device, when it has one (`/dev/iio:device0`); polled sensors need none.
    public var devnode: String?
    /// udev properties of the device (for `match` rules).
    public var properties: [String: String]
    /// The channels evflowd reads, in scan order (buffered) or name order (polled).
    public var channels: [SensorChannel]
    /// Whether samples come from the buffer (`/dev/iio:deviceN`) or by polling sysfs.
    public var buffered: Bool
    /// An accelerometer's mount matrix, when udev (the hwdb's `ACCEL_MOUNT_MATRIX`) or the
    /// kernel gives one, chosen with iio-sensor-proxy's precedence (`MountMatrix.resolve`).
    public var mountMatrix: MountMatrix?
    /// Where `mountMatrix` came from (nil without one).
    public var mountMatrixSource: MountMatrix.Source?
    /// A proximity sensor's near level as its driver gives it, in raw proximity units: sysfs'
    /// `in_proximity_nearlevel` (the device tree's `proximity-near-level`); nil without one.
    /// udev's `PROXIMITY_NEAR_LEVEL` (in `properties`) takes precedence, as in iio-sensor-proxy.
    public var proximityNearLevel: Double?

    /// A sensor description.
    public init(id: DeviceID, name: String, sysname: String, devnode: String? = nil,
                properties: [String: String] = [:], channels: [SensorChannel], buffered: Bool,
                mountMatrix: MountMatrix? = nil, mountMatrixSource: MountMatrix.Source? = nil,
                proximityNearLevel: Double? = nil) {
        self.id = id
        self.name = name
        self.sysname = sysname
        self.devnode = devnode
        self.properties = properties
        self.channels = channels
        self.buffered = buffered
        self.mountMatrix = mountMatrix
        self.mountMatrixSource = mountMatrix == nil ? nil : mountMatrixSource
        self.proximityNearLevel = proximityNearLevel
    }
}

/// One reading of all of a sensor's channels, in physical units, at one time.
public struct SensorSample: Hashable, Sendable {
    /// CLOCK_MONOTONIC nanoseconds: the timestamp channel's, or the read time.
    public var time: Int64
    /// One value per channel of the sensor's `SensorInfo.channels`, in the same order.
    public var values: [Double]

    /// A sample at `time`.
    public init(time: Int64, values: [Double]) {
        self.time = time
        self.values = values
    }
}
