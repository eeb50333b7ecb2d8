import InputModel

/// `BATTERY`: a watched device's battery changed (1.8, docs/protocol.md §5), to watchers whose
/// `devices` selection matches the device.
public struct BatteryMessage: Hashable, Sendable {
    /// The device's id.
    public var device: DeviceID
    /// The new reading.
    public var battery: DeviceBattery

    /// A battery message.
    public init(device: DeviceID, battery: DeviceBattery) {
        self.device = device
        self.battery = battery
    }
}

extension MessageWriter {
    /// `BATTERY`: `{"class":"BATTERY","device":…,"battery":{"percent":87,"status":"discharging","supply":"…"}}`.
    public mutating func appendBattery(device: DeviceID, _ battery: DeviceBattery) {
        json.beginObject()
        json.key("class"); json.string("BATTERY")
        json.key("device"); json.string(device.rawValue)
        writeBattery(battery)
        json.endObject()
        json.endLine()
    }

    /// The `battery` member (1.8) of a device summary and of `BATTERY`: `percent` or else
    /// `level`, then `status` and `supply`.
    mutating func writeBattery(_ b: DeviceBattery) {
        json.key("battery")
        json.beginObject()
        if let p = b.percent {
            json.key("percent"); json.int(Int64(p))
        } else if let l = b.level {
            json.key("level"); json.string(l.rawValue)
        }
        json.key("status"); json.string(b.status.rawValue)
        json.key("supply"); json.string(b.supply)
        json.endObject()
    }
}

extension MessageDecoder {
    func batteryMessage(_ o: Obj) throws(DecodingFailure) -> BatteryMessage {
        BatteryMessage(device: DeviceID(rawValue: try o.string("device")), battery: try battery(try o.required("battery")))
    }

    /// A `battery` member. A `percent` outside 0…100 is clamped; a `level` or `status` this
    /// client does not know reads as `unknown` (a later kernel's word), as unknown members are
    /// ignored.
    func battery(_ value: JSONValue) throws(DecodingFailure) -> DeviceBattery {
        let o = try Obj(value, in: "battery")
        let percent = try o.optionalInt("percent").map { Int(clamping: $0) }
        let level = try o.optionalString("level").map { DeviceBattery.Level(rawValue: $0) ?? .unknown }
        let status = DeviceBattery.Status(rawValue: try o.string("status")) ?? .unknown
        return DeviceBattery(percent: percent, level: level, status: status, supply: try o.string("supply"))
    }
}
