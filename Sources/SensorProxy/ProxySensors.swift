import InputModel

/// The sensor behind one kind of the D-Bus API, and how its samples become the kind's
/// properties.
public struct ProxySensor: Hashable, Sendable {
    /// The sensor.
    public var info: SensorInfo
    /// The channel the property is taken from (light: the illuminance or intensity channel;
    /// proximity: the proximity channel; unused for the accelerometer, whose orientation the
    /// hub decides).
    public var channel: Int
    /// Light: whether the channel is in lux (`illuminance`), else in the sensor's own units
    /// (`intensity`, `LightLevelUnit` "vendor").
    public var lux: Bool = true
    /// Proximity: the raw level at and above which something is near (`PROXIMITY_NEAR_LEVEL`).
    public var nearLevel: Double = 0
}

/// Which present sensors serve the API, as iio-sensor-proxy picks them: the first (in the
/// order they came) of each kind.
///
/// - Accelerometer: a sensor with `accel` channels; one whose udev `ACCEL_LOCATION` is `base`
///   (the keyboard half of a convertible) only when there is no other — the screen's decides
///   the screen's orientation.
/// - Light: a sensor with an `illuminance` channel (lux), else one with an `intensity`
///   channel ("vendor" units).
/// - Proximity: a sensor with a `proximity` channel and a near level: its udev property
///   `PROXIMITY_NEAR_LEVEL` (from the hwdb), else its driver's sysfs `in_proximity_nearlevel`
///   (`SensorInfo.proximityNearLevel`), iio-sensor-proxy's order. iio-sensor-proxy ignores a
///   proximity sensor with neither, and so does this: "near" means nothing without one.
public enum ProxySensors {
    /// The udev property giving a proximity sensor's near level.
    public static let nearLevelProperty = "PROXIMITY_NEAR_LEVEL"

    /// The sensor of each kind among `sensors` (in the order they came); a kind without one is absent.
    public static func choose(_ sensors: [SensorInfo]) -> [ProxySensorKind: ProxySensor] {
        var chosen: [ProxySensorKind: ProxySensor] = [:]
        let accelerometers = sensors.filter { $0.channels.contains { $0.quantity == .accel } }
        if let accel = accelerometers.first(where: { $0.properties["ACCEL_LOCATION"] != "base" }) ?? accelerometers.first {
            chosen[.accelerometer] = ProxySensor(info: accel, channel: 0)
        }
        for quantity in [SensorQuantity.illuminance, .intensity] where chosen[.light] == nil {
            for sensor in sensors {
                if let i = sensor.channels.firstIndex(where: { $0.quantity == quantity }) {
                    chosen[.light] = ProxySensor(info: sensor, channel: i, lux: quantity == .illuminance)
                    break
                }
            }
        }
        for sensor in sensors {
            guard let i = sensor.channels.firstIndex(where: { $0.quantity == .proximity }),
                  let level = nearLevel(of: sensor) else { continue }
            chosen[.proximity] = ProxySensor(info: sensor, channel: i, nearLevel: level)
            break
        }
        return chosen
    }

    /// A proximity sensor's near level: udev's `PROXIMITY_NEAR_LEVEL` when it is a level above
    /// 0, else the driver's `in_proximity_nearlevel`; nil when neither gives one.
    public static func nearLevel(of sensor: SensorInfo) -> Double? {
        if let text = sensor.properties[nearLevelProperty],
           let level = Double(text.trimmingCharacters(in: " \t")), level > 0, level.isFinite {
            return level
        }
        return sensor.proximityNearLevel.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = Substring(self)
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return s
    }
}
