import InputModel

// Sensors in the protocol (1.4, docs/protocol.md §4 "Sensors"): the `sensors` member of
// `DEVICES`, a sensor's `STATE`, the `sensors` member of `WATCH` and the `SAMPLE` message.
// Encoded by `MessageWriter`, decoded by `ServerMessage`, with the same types on both ends.

/// A sensor's `STATE` response: its description, its last samples and whether it is read now.
public struct SensorStateReport: Hashable, Sendable {
    /// The sensor (with its udev properties).
    public var sensor: SensorInfo
    /// The last sample out of the filters, if any.
    public var filtered: SensorSample?
    /// The last sample as read, if any.
    public var raw: SensorSample?
    /// The device's orientation (accelerometers with orientation on), if known.
    public var orientation: String?
    /// Whether the sensor is being read now (someone consumes it); otherwise the samples are
    /// the last seen while it was.
    public var live: Bool
    /// Failed reads since the sensor came (any read error, or a value that does not parse).
    public var readErrors: UInt64
    /// Whether its last 10 reads or more all failed (`SensorHealth.failedAfter`).
    public var failed: Bool

    /// A report.
    public init(sensor: SensorInfo, filtered: SensorSample? = nil, raw: SensorSample? = nil, orientation: String? = nil,
                live: Bool = false, readErrors: UInt64 = 0, failed: Bool = false) {
        self.sensor = sensor
        self.filtered = filtered
        self.raw = raw
        self.orientation = orientation
        self.live = live
        self.readErrors = readErrors
        self.failed = failed
    }
}

/// `SAMPLE`: one sample of a sensor, to watchers that selected it.
public struct SampleMessage: Hashable, Sendable {
    /// The sensor's id.
    public var device: DeviceID
    /// The sample's time (CLOCK_MONOTONIC ns).
    public var time: Int64
    /// Filtered or raw.
    public var stream: StreamKind
    /// Values by channel name, in physical units (the channel's unit, as `DEVICES` lists it).
    public var values: [String: Double]
    /// The device's orientation after this sample (a filtered accelerometer's), if known.
    public var orientation: String?

    /// A sample message.
    public init(device: DeviceID, time: Int64, stream: StreamKind, values: [String: Double], orientation: String? = nil) {
        self.device = device
        self.time = time
        self.stream = stream
        self.values = values
        self.orientation = orientation
    }
}

/// `SENSOR`: a sensor came or went while a client watches sensors (1.4).
public enum SensorChange: Hashable, Sendable {
    /// The sensor appeared (its samples follow, if selected).
    case added(SensorInfo)
    /// The sensor went away: no more samples of it.
    case removed(SensorInfo)

    /// The sensor.
    public var sensor: SensorInfo {
        switch self {
        case .added(let s), .removed(let s): s
        }
    }
}

extension SensorInfo {
    /// `sample`'s values by channel name; values that are not finite are left out (JSON has
    /// no NaN), as are values beyond the channel list.
    public func values(of sample: SensorSample) -> [String: Double] {
        var out: [String: Double] = [:]
        for (channel, value) in zip(channels, sample.values) where value.isFinite { out[channel.name] = value }
        return out
    }

    /// A sample of this sensor from values by channel name (a channel without a value: NaN).
    public func sample(time: Int64, values: [String: Double]) -> SensorSample {
        SensorSample(time: time, values: channels.map { values[$0.name] ?? .nan })
    }
}

extension WatchRequest {
    /// Whether the sensor is selected by `sensors`: an entry `all`, its id, its exact name,
    /// or a quantity one of its channels measures (`illuminance`, `accel`). No entries: none.
    public func selects(_ sensor: SensorInfo) -> Bool {
        sensors.contains { entry in
            entry == "all" || entry == sensor.id.rawValue || entry == sensor.name
                || sensor.channels.contains { $0.quantity.rawValue == entry }
        }
    }
}

extension MessageWriter {
    /// `SAMPLE`: the values of `sample` by channel name, in the sensor's channel order.
    public mutating func appendSample(_ sensor: SensorInfo, stream: StreamKind, sample: SensorSample, orientation: String? = nil) {
        json.beginObject()
        json.key("class"); json.string("SAMPLE")
        json.key("device"); json.string(sensor.id.rawValue)
        json.key("time"); json.int(sample.time)
        json.key("stream"); json.string(stream.rawValue)
        json.key("values"); writeSensorValues(sensor, sample)
        if let orientation { json.key("orientation"); json.string(orientation) }
        json.endObject()
        json.endLine()
    }

    /// `SENSOR` notice: a watched sensor came or went.
    public mutating func appendSensorNotice(_ change: SensorChange) {
        json.beginObject()
        json.key("class"); json.string("SENSOR")
        json.key("action")
        switch change {
        case .added: json.string("added")
        case .removed: json.string("removed")
        }
        json.key("sensor"); writeSensor(change.sensor, detail: false)
        json.endObject()
        json.endLine()
    }

    /// A sensor's `STATE` response.
    public mutating func appendSensorState(_ report: SensorStateReport, tag: RequestTag? = nil) {
        json.beginObject()
        json.key("class"); json.string("STATE")
        json.key("sensor"); writeSensor(report.sensor, detail: true)
        json.key("live"); json.bool(report.live)
        if let f = report.filtered {
            json.key("time"); json.int(f.time)
            json.key("values"); writeSensorValues(report.sensor, f)
        }
        if let r = report.raw {
            json.key("raw_time"); json.int(r.time)
            json.key("raw"); writeSensorValues(report.sensor, r)
        }
        if let o = report.orientation { json.key("orientation"); json.string(o) }
        json.key("read_errors"); json.int(Int64(clamping: report.readErrors))
        json.key("failed"); json.bool(report.failed)
        if let tag { json.key("id"); writeTagValue(tag) }
        json.endObject()
        json.endLine()
    }

    private mutating func writeSensorValues(_ sensor: SensorInfo, _ sample: SensorSample) {
        json.beginObject()
        for (channel, value) in zip(sensor.channels, sample.values) where value.isFinite {
            json.key(channel.name)
            json.double(value)
        }
        json.endObject()
    }

    /// A sensor summary (`DEVICES`' `sensors`), or with `detail` its udev properties too.
    mutating func writeSensor(_ s: SensorInfo, detail: Bool) {
        json.beginObject()
        json.key("id"); json.string(s.id.rawValue)
        json.key("name"); json.string(s.name)
        json.key("sysname"); json.string(s.sysname)
        if let n = s.devnode { json.key("devnode"); json.string(n) }
        json.key("reading"); json.string(s.buffered ? "buffered" : "polled")
        json.key("channels")
        json.beginArray()
        for c in s.channels {
            json.beginObject()
            json.key("name"); json.string(c.name)
            json.key("quantity"); json.string(c.quantity.rawValue)
            json.key("unit"); json.string(c.unit)
            json.endObject()
        }
        json.endArray()
        if detail {
            json.key("udev")
            json.beginObject()
            for (k, v) in s.properties.sorted(by: { $0.key < $1.key }) {
                json.key(k)
                json.string(v)
            }
            json.endObject()
        }
        json.endObject()
    }
}

extension MessageDecoder {
    func sensor(_ value: JSONValue, detail: Bool) throws(DecodingFailure) -> SensorInfo {
        let o = try Obj(value, in: "sensor")
        var channels: [SensorChannel] = []
        for v in try o.array("channels") {
            let c = try Obj(v, in: "channels")
            // A quantity this client does not know (a later version's) cannot be shown in its
            // unit: the sensor is still listed, without that channel.
            guard let quantity = SensorQuantity(rawValue: try c.string("quantity")) else { continue }
            channels.append(SensorChannel(name: try c.string("name"), quantity: quantity))
        }
        let buffered: Bool
        switch try o.string("reading") {
        case "buffered": buffered = true
        case "polled": buffered = false
        default: throw o.wrong("reading")
        }
        var properties: [String: String] = [:]
        if detail {
            for (k, v) in try o.optionalObject("udev") ?? [:] {
                guard case .string(let s) = v else { throw o.wrong("udev") }
                properties[k] = s
            }
        }
        return SensorInfo(id: DeviceID(rawValue: try o.string("id")), name: try o.string("name"),
                          sysname: try o.string("sysname"), devnode: try o.optionalString("devnode"),
                          properties: properties, channels: channels, buffered: buffered)
    }

    func sensorValues(_ o: Obj, _ key: String) throws(DecodingFailure) -> [String: Double] {
        var out: [String: Double] = [:]
        for (name, v) in try o.optionalObject(key) ?? [:] {
            switch v {
            case .integer(let n): out[name] = Double(n)
            case .number(let d): out[name] = d
            default: throw o.wrong(key)
            }
        }
        return out
    }

    func sensorState(_ o: Obj) throws(DecodingFailure) -> SensorStateReport {
        let info = try sensor(try o.required("sensor"), detail: true)
        var report = SensorStateReport(sensor: info, live: try o.optionalBool("live") ?? false)
        if let t = try o.optionalInt("time") { report.filtered = info.sample(time: t, values: try sensorValues(o, "values")) }
        if let t = try o.optionalInt("raw_time") { report.raw = info.sample(time: t, values: try sensorValues(o, "raw")) }
        report.orientation = try o.optionalString("orientation")
        report.readErrors = UInt64(clamping: max(0, try o.optionalInt("read_errors") ?? 0))
        report.failed = try o.optionalBool("failed") ?? false
        return report
    }

    func sensorNotice(_ o: Obj) throws(DecodingFailure) -> SensorChange {
        let info = try sensor(try o.required("sensor"), detail: false)
        switch try o.string("action") {
        case "added": return .added(info)
        case "removed": return .removed(info)
        case let a: throw DecodingFailure("SENSOR: unknown action '\(a)'")
        }
    }

    func sample(_ o: Obj) throws(DecodingFailure) -> SampleMessage {
        guard let stream = StreamKind(rawValue: try o.string("stream")) else { throw o.wrong("stream") }
        return SampleMessage(device: DeviceID(rawValue: try o.string("device")), time: try o.int("time"),
                             stream: stream, values: try sensorValues(o, "values"), orientation: try o.optionalString("orientation"))
    }
}
