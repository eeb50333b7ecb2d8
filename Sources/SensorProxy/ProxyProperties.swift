/// A property's value as it goes on the bus: a D-Bus boolean (`b`), string (`s`) or double (`d`).
public enum ProxyValue: Hashable, Sendable {
    /// A boolean (`b`).
    case bool(Bool)
    /// A string (`s`).
    case string(String)
    /// A double (`d`).
    case double(Double)

    /// The D-Bus type signature of the value.
    public var signature: String {
        switch self {
        case .bool: "b"
        case .string: "s"
        case .double: "d"
        }
    }
}

/// The properties of `net.hadess.SensorProxy` (iio-sensor-proxy 3.x's main interface) and
/// the rules that keep them: which sensor is present, and the last value each gave.
///
/// The values are those iio-sensor-proxy's clients see: an orientation among `normal`,
/// `bottom-up`, `left-up`, `right-up` and `undefined` (never face-up or face-down: lying flat
/// keeps the last upright one, as iio-sensor-proxy does, so a tablet put down on a table does
/// not rotate); the light level with its unit; proximity as near or not, with
/// iio-sensor-proxy's margin around the near level. A sensor that goes away keeps its last
/// values (its `Has…` turns false); one that comes back starts from them. Pure.
public struct ProxyProperties: Hashable, Sendable {
    /// An accelerometer serves the API.
    public var hasAccelerometer = false
    /// `normal`, `bottom-up`, `left-up`, `right-up`, or `undefined` before the first upright
    /// reading.
    public var accelerometerOrientation = "undefined"
    /// A light sensor serves the API.
    public var hasAmbientLight = false
    /// `lux`, or `vendor` for a sensor in its own units.
    public var lightLevelUnit = "lux"
    /// The last light level, in `lightLevelUnit` (0 before the first reading).
    public var lightLevel = 0.0
    /// A proximity sensor with a near level serves the API.
    public var hasProximity = false
    /// Whether something is near (false before the first reading).
    public var proximityNear = false
    /// The last proximity level read (the margin around the near level depends on it).
    private var lastProximity = 0.0

    /// No sensor, nothing read.
    public init() {}

    /// The orientations iio-sensor-proxy publishes.
    public static let orientations: Set<String> = ["normal", "bottom-up", "left-up", "right-up", "undefined"]

    /// Every property by name, in the interface's order (GetAll, Introspect).
    public var all: [(name: String, value: ProxyValue)] {
        [("HasAccelerometer", .bool(hasAccelerometer)),
         ("AccelerometerOrientation", .string(accelerometerOrientation)),
         ("HasAmbientLight", .bool(hasAmbientLight)),
         ("LightLevelUnit", .string(lightLevelUnit)),
         ("LightLevel", .double(lightLevel)),
         ("HasProximity", .bool(hasProximity)),
         ("ProximityNear", .bool(proximityNear))]
    }

    /// One property's value; nil for a name the interface does not have.
    public func value(of name: String) -> ProxyValue? { all.first { $0.name == name }?.value }

    /// The properties whose values differ from `old`'s, in the interface's order: what one
    /// `PropertiesChanged` carries.
    public func changes(since old: ProxyProperties) -> [(name: String, value: ProxyValue)] {
        zip(old.all, all).compactMap { before, now in before.value == now.value ? nil : now }
    }

    /// The sensors serving each kind now: the `Has…` properties, and the light's unit.
    public mutating func present(_ sensors: [ProxySensorKind: ProxySensor]) {
        hasAccelerometer = sensors[.accelerometer] != nil
        hasAmbientLight = sensors[.light] != nil
        if let light = sensors[.light] { lightLevelUnit = light.lux ? "lux" : "vendor" }
        hasProximity = sensors[.proximity] != nil
    }

    /// An orientation from the hub (evflow's names, nil when it has none) as the API gives
    /// it: the upright ones as they are; flat (`face-up`, `face-down`), none or an unknown
    /// name keep the current one.
    public mutating func orientation(_ name: String?) {
        guard let name, name != "undefined", Self.orientations.contains(name) else { return }
        accelerometerOrientation = name
    }

    /// A light level, in the unit of `LightLevelUnit`. A value that is not finite is not a level.
    public mutating func light(_ level: Double) {
        guard level.isFinite else { return }
        lightLevel = level
    }

    /// A proximity level: near when above the near level, with iio-sensor-proxy's margin of
    /// 10 % on the side away from the last level (the level must pass 1.1 × near to become
    /// near from below, and fall under 0.9 × near to become far from above), so a level
    /// hovering at the threshold does not flicker.
    public mutating func proximity(_ level: Double, nearLevel: Double) {
        guard level.isFinite else { return }
        let threshold = nearLevel * (lastProximity > nearLevel ? 0.9 : 1.1)
        proximityNear = level > threshold
        lastProximity = level
    }
}
