/// A device's own battery as evflowd read it from sysfs `power_supply` (protocol 1.8, the
/// `battery` member of a device summary and the `BATTERY` message; docs/protocol.md, "Batteries").
public struct DeviceBattery: Hashable, Sendable, Codable {
    /// Charge in percent, 0…100, from the supply's `capacity`; nil when the driver gives only a
    /// `capacity_level` (then `level` carries it) or the capacity could not be read.
    public var percent: Int?
    /// The coarse charge from `capacity_level`, sent only when there is no `percent`.
    public var level: Level?
    /// What the supply is doing (`status`).
    public var status: Status
    /// The power supply's name (`hid-aa:bb:cc:dd:ee:ff-battery`), its directory under
    /// `/sys/class/power_supply`.
    public var supply: String

    /// sysfs `capacity_level`, lowercased.
    public enum Level: String, Hashable, Sendable, Codable, CaseIterable {
        case critical, low, normal, high, full, unknown
    }

    /// sysfs `status`, lowercased with spaces as `-`.
    public enum Status: String, Hashable, Sendable, Codable, CaseIterable {
        case charging, discharging, notCharging = "not-charging", full, unknown
    }

    /// A battery reading; a `percent` outside 0…100 is clamped into it.
    public init(percent: Int? = nil, level: Level? = nil, status: Status = .unknown, supply: String) {
        self.percent = percent.map { min(max($0, 0), 100) }
        self.level = percent == nil ? level : nil
        self.status = status
        self.supply = supply
    }

    /// Whether `other` differs in what a `BATTERY` message reports as a change: percent,
    /// level or status (the supply's name is the battery's identity, not a reading).
    public func readingDiffers(from other: DeviceBattery) -> Bool {
        percent != other.percent || level != other.level || status != other.status
    }
}

extension DeviceBattery.Level {
    /// The level of a sysfs `capacity_level` text (`Critical`, `Low`, `Normal`, `High`, `Full`,
    /// `Unknown`, case and surrounding space ignored); nil for anything else.
    public init?(sysfs text: String) {
        self.init(rawValue: DeviceBattery.sysfsWord(text))
    }
}

extension DeviceBattery.Status {
    /// The status of a sysfs `status` text (`Charging`, `Discharging`, `Not charging`, `Full`,
    /// `Unknown`); `unknown` for anything else, so a new kernel word never breaks a client.
    public init(sysfs text: String) {
        self = Self(rawValue: DeviceBattery.sysfsWord(text)) ?? .unknown
    }
}

extension DeviceBattery {
    /// A sysfs word lowercased, trimmed, spaces as `-`.
    static func sysfsWord(_ text: String) -> String {
        var s = Substring(text)
        while let c = s.first, c == " " || c == "\n" || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\n" || c == "\t" { s.removeLast() }
        return String(s.lowercased().map { $0 == " " ? "-" : $0 })
    }
}
