import InputModel

/// Encodes every server message of docs/protocol.md, one line each, into a reusable buffer.
///
/// Use one writer per connection or per encoding thread: `reset()`, append one or more
/// messages, hand `bytes` to the socket (e.g. `ByteBuffer.writeBytes(writer.bytes)` in a NIO
/// handler), repeat. Every `append…` writes exactly one complete line ending in `\n`, so
/// several messages can be batched in one write and a receiver never sees a partial object.
/// Optional members are left out when nil (§3), so writers never emit `null` for them.
public struct MessageWriter: Sendable {
    /// The encoded messages so far.
    public private(set) var json: JSONWriter
    /// Names of types and codes.
    public let names: EventNameCache

    /// Creates a writer.
    public init(names: EventNameCache = .standard, capacity: Int = 4096) {
        json = JSONWriter(capacity: capacity)
        self.names = names
    }

    /// The bytes of the messages appended since the last `reset()`.
    public var bytes: [UInt8] { json.bytes }

    /// Forgets the messages, keeping the buffer's storage.
    public mutating func reset() { json.reset() }

    // MARK: - Greeting, responses

    /// `VERSION`: the greeting; `keys` says whether this client sees key codes (1.2).
    public mutating func appendVersion(release: String, keys: KeyVisibility) {
        json.beginObject()
        json.key("class"); json.string("VERSION")
        json.key("release"); json.string(release)
        json.key("proto_major"); json.int(ProtocolConstants.protoMajor)
        json.key("proto_minor"); json.int(ProtocolConstants.protoMinor)
        json.key("keys"); json.string(keys.rawValue)
        endMessage()
    }

    /// `DEVICES` response: device summaries, sorted by id.
    public mutating func appendDevices(_ devices: [DeviceInfo], tag: RequestTag? = nil) {
        begin("DEVICES")
        json.key("devices")
        json.beginArray()
        for d in devices.sorted(by: { $0.id < $1.id }) { writeDevice(d, detail: false) }
        json.endArray()
        writeTag(tag)
        endMessage()
    }

    /// `STATE` response.
    public mutating func appendState(_ report: DeviceStateReport, tag: RequestTag? = nil) {
        begin("STATE")
        json.key("device"); writeDevice(report.device, detail: true)
        json.key("keys_down")
        json.beginArray()
        for code in report.keysDown.sorted() { names.writeCode(type: EventType.key, code: code, to: &json) }
        json.endArray()
        json.key("abs"); writeCodeValues(report.abs, type: EventType.abs)
        json.key("switches"); writeCodeValues(report.switches, type: EventType.sw)
        json.key("leds"); writeCodeValues(report.leds, type: EventType.led)
        if let t = report.lastEventTime { json.key("last_event"); json.int(t) }
        let c = report.counters
        json.key("counters")
        json.beginObject()
        json.key("frames_in"); json.uint(c.framesIn)
        json.key("events_in"); json.uint(c.eventsIn)
        json.key("frames_out"); json.uint(c.framesOut)
        json.key("events_out"); json.uint(c.eventsOut)
        json.key("syn_dropped"); json.uint(c.synDropped)
        json.key("msc_dropped"); json.uint(c.mscDropped)
        json.key("dropped"); writeCounts(c.droppedByFilter)
        json.endObject()
        writeTag(tag)
        endMessage()
    }

    /// `STATS` response.
    public mutating func appendStats(_ s: ServerStats, tag: RequestTag? = nil) {
        begin("STATS")
        json.key("release"); json.string(s.release)
        json.key("uptime"); json.double(s.uptime)
        json.key("now"); json.int(s.now)
        json.key("devices"); json.int(s.devices)
        json.key("clients"); json.int(s.clients)
        json.key("watchers"); json.int(s.watchers)
        json.key("live_resources"); json.int(s.liveResources)
        json.key("dropped"); writeCounts(s.droppedByFilter)
        if !s.deviceDropped.isEmpty {
            json.key("device_dropped")
            writeByDevice(s.deviceDropped) { $0.writeCounts($1) }
        }
        if !s.spuriousRelease.isEmpty {
            json.key("spurious_release")
            writeByDevice(s.spuriousRelease) { w, codes in
                w.json.beginArray()
                for code in codes { w.json.string(code) }
                w.json.endArray()
            }
        }
        if !s.deviceOutput.isEmpty {
            json.key("device_output")
            writeByDevice(s.deviceOutput) { w, c in
                w.json.beginObject()
                w.json.key("frames_written"); w.json.int(c.framesWritten)
                w.json.key("write_errors"); w.json.int(c.writeErrors)
                w.json.endObject()
            }
        }
        json.key("closed")
        json.beginObject()
        for reason in CloseReason.allCases {
            json.key(reason.rawValue); json.uint(s.closed[reason] ?? 0)
        }
        json.endObject()
        json.key("client_list")
        json.beginArray()
        for c in s.clientList.sorted(by: { $0.client < $1.client }) {
            json.beginObject()
            json.key("client"); json.uint(c.client)
            if let pid = c.pid { json.key("pid"); json.int(Int64(pid)) }
            if let uid = c.uid { json.key("uid"); json.uint(UInt64(uid)) }
            if let tag = c.tag { json.key("id"); writeTagValue(tag) }
            json.key("watching"); json.bool(c.stream != nil)
            if let stream = c.stream { json.key("stream"); json.string(stream.rawValue) }
            json.key("sent"); json.uint(c.sent)
            json.key("dropped"); json.uint(c.dropped)
            json.key("buffered"); json.int(c.buffered)
            json.endObject()
        }
        json.endArray()
        writeTag(tag)
        endMessage()
    }

    /// `WATCH` response: the selection as understood, and the ids of matching devices present.
    public mutating func appendWatch(_ watch: WatchRequest, matched: [DeviceID], tag: RequestTag? = nil) {
        begin("WATCH")
        writeWatchMembers(watch)
        json.key("matched")
        json.beginArray()
        for id in matched.sorted() { json.string(id.rawValue) }
        json.endArray()
        writeTag(tag)
        endMessage()
    }

    /// The members of a `WATCH` request or response (all but `matched` and `id`), in the
    /// normal form: selectors as given, types and codes ascending, names where there are names.
    private mutating func writeWatchMembers(_ watch: WatchRequest) {
        if !watch.devices.isEmpty {
            json.key("devices")
            json.beginArray()
            for d in watch.devices { json.string(d.text) }
            json.endArray()
        }
        let types = watch.events.types
        if !types.isEmpty {
            json.key("types")
            json.beginArray()
            for t in types { names.writeType(t, to: &json) }
            json.endArray()
        }
        let codes = watch.events.codes
        if !codes.isEmpty {
            json.key("codes")
            json.beginArray()
            for c in codes { json.string(names.naming.codeText(c)) }
            json.endArray()
        }
        json.key("stream"); json.string(watch.stream.rawValue)
        if let rate = watch.maxRate { json.key("max_rate"); json.double(rate) }
    }

    // MARK: - Requests (what a client sends)

    /// A request line: `Request.parse` reads it back as an equal `Request` (the parser's
    /// normal form; a `DeviceSelector.name` spelt like an id or a class name reads back as
    /// that id or class, as it would from any client).
    public mutating func appendRequest(_ request: Request) {
        json.beginObject()
        json.key("class"); json.string(request.requestClass)
        switch request.kind {
        case .devices, .stats, .unwatch, .ping, .metrics, .latency: break
        case .state(let device): json.key("device"); json.string(device)
        case .watch(let watch): writeWatchMembers(watch)
        }
        writeTag(request.tag)
        endMessage()
    }

    /// `UNWATCH` response.
    public mutating func appendUnwatch(tag: RequestTag? = nil) {
        begin("UNWATCH")
        writeTag(tag)
        endMessage()
    }

    /// `PING` response with the server's monotonic time.
    public mutating func appendPing(now: Int64, tag: RequestTag? = nil) {
        begin("PING")
        json.key("now"); json.int(now)
        writeTag(tag)
        endMessage()
    }

    /// `METRICS` response: the exposition text (Prometheus text format 0.0.4) as one string.
    public mutating func appendMetrics(_ text: String, tag: RequestTag? = nil) {
        begin("METRICS")
        json.key("format"); json.string(MetricsFormat.prometheusText)
        json.key("text"); json.string(text)
        writeTag(tag)
        endMessage()
    }

    /// `LATENCY` response: ages in nanoseconds per stage, in total and per present device.
    public mutating func appendLatency(_ report: LatencyReport, tag: RequestTag? = nil) {
        begin("LATENCY")
        json.key("clock"); json.string(report.clock.rawValue)
        json.key("unit"); json.string("ns")
        json.key("total"); writeStages(report.total)
        json.key("devices")
        writeByDevice(report.devices) { $0.writeStages($1) }
        writeTag(tag)
        endMessage()
    }

    /// An object with one member per device (by id, in id order), each written by `value`.
    private mutating func writeByDevice<V>(_ map: [DeviceID: V], _ value: (inout MessageWriter, V) -> Void) {
        json.beginObject()
        for (id, v) in map.sorted(by: { $0.key < $1.key }) {
            json.key(id.rawValue)
            value(&self, v)
        }
        json.endObject()
    }

    private mutating func writeStages(_ stages: [LatencyStage: LatencySummary]) {
        json.beginObject()
        for (stage, s) in stages.sorted(by: { $0.key < $1.key }) {
            json.key(stage.rawValue)
            json.beginObject()
            json.key("count"); json.uint(s.count)
            json.key("p50"); json.uint(s.p50)
            json.key("p90"); json.uint(s.p90)
            json.key("p99"); json.uint(s.p99)
            json.key("p99_9"); json.uint(s.p999)
            json.key("max"); json.uint(s.max)
            json.endObject()
        }
        json.endObject()
    }

    /// `ERROR`.
    public mutating func appendError(_ error: ProtocolError) {
        begin("ERROR")
        json.key("message"); json.string(error.message)
        if let c = error.requestClass { json.key("request_class"); json.string(c) }
        if let f = error.field { json.key("field"); json.string(f) }
        writeTag(error.tag)
        endMessage()
    }

    /// `CLOSE`: the last message before the server closes the connection.
    public mutating func appendClose(reason: CloseReason, message: String) {
        begin("CLOSE")
        json.key("reason"); json.string(reason.rawValue)
        json.key("message"); json.string(message)
        endMessage()
    }

    /// `DEVICE` notice: a device was added or removed.
    public mutating func appendDeviceNotice(_ change: DeviceChange) {
        begin("DEVICE")
        json.key("action")
        switch change {
        case .added: json.string("added")
        case .removed: json.string("removed")
        case .inaccessible(_, let reason):
            json.string("inaccessible")
            json.key("reason"); json.string(reason)
        }
        json.key("device"); writeDevice(change.device, detail: false)
        endMessage()
    }

    // MARK: - Stream messages (hot path)

    /// `FRAME`: the events of `frame` that `selection` passes, key codes hidden when `keys`
    /// is `.hidden` (`KeyPrivacy.redacted`). Writes nothing and returns false when no event
    /// is left (an empty frame is not sent).
    @discardableResult
    public mutating func appendFrame(device: DeviceID, stream: StreamKind, frame: InputFrame,
                                     selection: EventSelection = .all, keys: KeyVisibility = .visible) -> Bool {
        let mark = json.bytes.count
        begin("FRAME")
        json.key("device"); json.string(device.rawValue)
        json.key("time"); json.int(frame.time)
        json.key("stream"); json.string(stream.rawValue)
        json.key("events")
        json.beginArray()
        var any = false
        let hideKeys = keys == .hidden
        for event in frame.events where selection.matches(type: event.type, code: event.code) {
            guard let e = hideKeys ? KeyPrivacy.redacted(event) : event else { continue }
            any = true
            json.beginObject()
            json.key("type"); names.writeType(e.type, to: &json)
            json.key("code"); names.writeCode(type: e.type, code: e.code, to: &json)
            json.key("value"); json.int(Int64(e.value))
            if e.time != frame.time { json.key("time"); json.int(e.time) }
            json.endObject()
        }
        guard any else {
            json.bytes.removeSubrange(mark...)
            json.needsComma = false   // back at top level, as before `begin`
            return false
        }
        json.endArray()
        endMessage()
        return true
    }

    // MARK: - Pieces

    private mutating func begin(_ cls: StaticString) {
        json.beginObject()
        json.key("class")
        json.bytes.append(UInt8(ascii: "\""))
        cls.withUTF8Buffer { json.bytes.append(contentsOf: $0) }
        json.bytes.append(UInt8(ascii: "\""))
        json.needsComma = true
    }

    private mutating func endMessage() {
        json.endObject()
        json.endLine()
    }

    private mutating func writeTag(_ tag: RequestTag?) {
        guard let tag else { return }
        json.key("id")
        writeTagValue(tag)
    }

    private mutating func writeTagValue(_ tag: RequestTag) {
        switch tag {
        case .string(let s): json.string(s)
        case .integer(let n): json.int(n)
        }
    }

    /// `{"NAME":value,...}` for codes of one type, ascending by code.
    private mutating func writeCodeValues(_ values: [UInt16: Int32], type: UInt16) {
        json.beginObject()
        for (code, value) in values.sorted(by: { $0.key < $1.key }) {
            json.key(names.codeKey(type: type, code: code))
            json.int(Int64(value))
        }
        json.endObject()
    }

    /// `{"name":count,...}`, ascending by name.
    private mutating func writeCounts(_ counts: [String: UInt64]) {
        json.beginObject()
        for (name, n) in counts.sorted(by: { $0.key < $1.key }) {
            json.key(name)
            json.uint(n)
        }
        json.endObject()
    }

    private static func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 4 - s.count) + s
    }

    /// A device summary, or with `detail` the full description (§4 STATE).
    /// A device's `output` member (1.3): mode, twin, grab state, why not grabbed.
    private mutating func writeOutput(_ o: DeviceOutputStatus) {
        json.key("output")
        json.beginObject()
        json.key("mode"); json.string(o.mode.rawValue)
        if let node = o.virtualNode { json.key("virtual_node"); json.string(node) }
        json.key("grab"); json.string(o.grab.rawValue)
        if let reason = o.reason { json.key("reason"); json.string(reason) }
        json.endObject()
    }

    private mutating func writeDevice(_ d: DeviceInfo, detail: Bool) {
        json.beginObject()
        json.key("id"); json.string(d.id.rawValue)
        json.key("name"); json.string(d.name)
        json.key("bus"); json.string(Self.hex4(d.inputID.bustype))
        json.key("vendor"); json.string(Self.hex4(d.inputID.vendor))
        json.key("product"); json.string(Self.hex4(d.inputID.product))
        json.key("version"); json.string(Self.hex4(d.inputID.version))
        if let p = d.phys { json.key("phys"); json.string(p) }
        if let u = d.uniq { json.key("uniq"); json.string(u) }
        if let n = d.devnode { json.key("devnode"); json.string(n) }
        json.key("classes")
        json.beginArray()
        for c in d.classes.sorted() { json.string(c.rawValue) }
        json.endArray()
        if let o = d.output { writeOutput(o) }
        if detail {
            json.key("capabilities")
            json.beginObject()
            for (type, codes) in d.capabilities.sorted(by: { $0.key < $1.key }) {
                json.key(names.typeKey(type))
                json.beginArray()
                for code in codes.sorted() { names.writeCode(type: type, code: code, to: &json) }
                json.endArray()
            }
            json.endObject()
            json.key("abs_info")
            json.beginObject()
            for (code, a) in d.absInfo.sorted(by: { $0.key < $1.key }) {
                json.key(names.codeKey(type: EventType.abs, code: code))
                json.beginObject()
                json.key("value"); json.int(Int64(a.value))
                json.key("min"); json.int(Int64(a.minimum))
                json.key("max"); json.int(Int64(a.maximum))
                json.key("fuzz"); json.int(Int64(a.fuzz))
                json.key("flat"); json.int(Int64(a.flat))
                json.key("resolution"); json.int(Int64(a.resolution))
                json.endObject()
            }
            json.endObject()
            json.key("props")
            json.beginArray()
            for p in d.inputProperties.sorted() {
                if let name = names.naming.propertyName(p) { json.string(name) } else { json.int(Int64(p)) }
            }
            json.endArray()
            json.key("udev")
            json.beginObject()
            for (k, v) in d.properties.sorted(by: { $0.key < $1.key }) {
                json.key(k)
                json.string(v)
            }
            json.endObject()
        }
        json.endObject()
    }
}
