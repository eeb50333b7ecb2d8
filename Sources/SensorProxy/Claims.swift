/// The three sensor kinds of iio-sensor-proxy's main interface (`net.hadess.SensorProxy`),
/// each claimed and released on its own (`ClaimAccelerometer`, `ClaimLight`, `ClaimProximity`).
public enum ProxySensorKind: String, Hashable, Sendable, CaseIterable {
    /// `AccelerometerOrientation`.
    case accelerometer = "Accelerometer"
    /// `LightLevel` and its unit.
    case light = "Light"
    /// `ProximityNear`.
    case proximity = "Proximity"

    /// The kind and whether it is a claim (true) or a release, of a method name of the
    /// interface (`ClaimLight` → `(.light, true)`); nil for any other name.
    public static func method(_ name: String) -> (kind: ProxySensorKind, claim: Bool)? {
        for kind in allCases {
            if name == "Claim" + kind.rawValue { return (kind, true) }
            if name == "Release" + kind.rawValue { return (kind, false) }
        }
        return nil
    }
}

/// Who claims which sensor: the bus names of the callers of `Claim…` (their unique names,
/// `:1.42`), per kind. As in iio-sensor-proxy, a claim is not counted: claiming twice and
/// releasing once releases, and a release by a caller with no claim does nothing. A claim
/// ends with its caller's release or when its name leaves the bus (`vanished`).
///
/// The answers say when reading must start or stop: a kind is read while it has a claimant
/// (the hub's own reference count adds the socket's watchers). Pure; no bus, no sensor.
public struct ClaimBook: Hashable, Sendable {
    private var claimants: [ProxySensorKind: Set<String>] = [:]

    /// No claims.
    public init() {}

    /// `name` claims `kind`; true when it is the kind's first claimant (reading starts).
    public mutating func claim(_ kind: ProxySensorKind, by name: String) -> Bool {
        let wasClaimed = isClaimed(kind)
        claimants[kind, default: []].insert(name)
        return !wasClaimed
    }

    /// `name` releases `kind`; true when that ended the kind's last claim (reading stops).
    public mutating func release(_ kind: ProxySensorKind, by name: String) -> Bool {
        guard claimants[kind]?.remove(name) != nil else { return false }
        return !isClaimed(kind)
    }

    /// `name` left the bus: its claims end. The kinds whose last claim that was, in
    /// `ProxySensorKind.allCases` order.
    public mutating func vanished(_ name: String) -> [ProxySensorKind] {
        ProxySensorKind.allCases.filter { release($0, by: name) }
    }

    /// Whether anyone claims `kind`.
    public func isClaimed(_ kind: ProxySensorKind) -> Bool { !(claimants[kind]?.isEmpty ?? true) }

    /// The names claiming `kind`, sorted.
    public func names(_ kind: ProxySensorKind) -> [String] { (claimants[kind] ?? []).sorted() }

    /// Whether `name` holds any claim (a NameOwnerChanged for another name is none of ours).
    public func holds(_ name: String) -> Bool { claimants.values.contains { $0.contains(name) } }
}
