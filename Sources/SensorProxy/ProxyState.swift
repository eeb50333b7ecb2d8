import InputModel

/// The D-Bus service's whole state, without the bus: the present sensors, the claims, the
/// properties, and so which sensors must be read. Each change answers with the properties it
/// changed (one `PropertiesChanged`, empty for none); the caller then reads exactly the
/// sensors of `reading`.
///
/// As in iio-sensor-proxy, a claim may come before its sensor does (the sensor is read once it
/// comes) and outlives its sensor's removal (read again when one comes back); only its
/// caller's release or departure from the bus ends it.
public struct ProxyState: Sendable {
    /// Who claims what.
    public private(set) var claims = ClaimBook()
    /// The properties as clients see them.
    public private(set) var properties = ProxyProperties()
    /// The sensor serving each kind now.
    public private(set) var chosen: [ProxySensorKind: ProxySensor] = [:]
    /// The present sensors, in the order they came.
    private var present: [SensorInfo] = []

    /// No sensors, no claims.
    public init() {}

    /// The sensors to read now: the chosen sensor of each claimed kind.
    public var reading: [ProxySensorKind: DeviceID] {
        chosen.filter { claims.isClaimed($0.key) }.mapValues(\.info.id)
    }

    /// A sensor came (or came back with the same id: it replaces the old one).
    public mutating func added(_ info: SensorInfo) -> [(name: String, value: ProxyValue)] {
        present.removeAll { $0.id == info.id }
        present.append(info)
        return rechoose()
    }

    /// A sensor went away.
    public mutating func removed(_ id: DeviceID) -> [(name: String, value: ProxyValue)] {
        present.removeAll { $0.id == id }
        return rechoose()
    }

    /// `name` called `Claim<kind>`.
    public mutating func claim(_ kind: ProxySensorKind, by name: String) {
        _ = claims.claim(kind, by: name)
    }

    /// `name` called `Release<kind>`.
    public mutating func release(_ kind: ProxySensorKind, by name: String) {
        _ = claims.release(kind, by: name)
    }

    /// `name` left the bus; true when it held a claim.
    public mutating func vanished(_ name: String) -> Bool {
        guard claims.holds(name) else { return false }
        _ = claims.vanished(name)
        return true
    }

    /// A filtered sample of sensor `id` read for `kind` (with the hub's orientation, for an
    /// accelerometer): the properties it changed. A sample of a sensor that no longer serves
    /// `kind` changes nothing. (A sensor serving two kinds, light and proximity in one chip,
    /// is read once per kind: each sample counts once for each.)
    public mutating func sample(_ kind: ProxySensorKind, of id: DeviceID, values: [Double],
                                orientation: String?) -> [(name: String, value: ProxyValue)] {
        guard let sensor = chosen[kind], sensor.info.id == id else { return [] }
        let old = properties
        switch kind {
        case .accelerometer:
            properties.orientation(orientation)
        case .light:
            if sensor.channel < values.count { properties.light(values[sensor.channel]) }
        case .proximity:
            if sensor.channel < values.count { properties.proximity(values[sensor.channel], nearLevel: sensor.nearLevel) }
        }
        return properties.changes(since: old)
    }

    private mutating func rechoose() -> [(name: String, value: ProxyValue)] {
        let old = properties
        chosen = ProxySensors.choose(present)
        properties.present(chosen)
        return properties.changes(since: old)
    }
}
