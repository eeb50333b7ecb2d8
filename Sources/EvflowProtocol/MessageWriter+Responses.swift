import InputModel

/// The responses and notices a server sends (docs/protocol.md §4): one line each, see `MessageWriter`.
extension MessageWriter {
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

    /// `DEVICES` response: device summaries, sorted by id; `sensors` (1.4), sorted by id, left
    /// out when there is none.
    public mutating func appendDevices(_ devices: [DeviceInfo], sensors: [SensorInfo] = [], tag: RequestTag? = nil) {
        begin("DEVICES")
        json.key("devices")
        json.beginArray()
        for d in devices.sorted(by: { $0.id < $1.id }) { writeDevice(d, detail: false) }
        json.endArray()
        if !sensors.isEmpty {
            json.key("sensors")
            json.beginArray()
            for s in sensors.sorted(by: { $0.id < $1.id }) { writeSensor(s, detail: false) }
            json.endArray()
        }
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
        if !c.chatterByKey.isEmpty {
            json.key("chatter_by_key")
            json.beginObject()
            for (code, n) in c.chatterByKey.sorted(by: { $0.key < $1.key }) {
                json.key(names.codeKey(type: EventType.key, code: code))
                json.uint(n)
            }
            json.endObject()
        }
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
    mutating func writeWatchMembers(_ watch: WatchRequest) {
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
        if !watch.sensors.isEmpty {
            json.key("sensors")
            json.beginArray()
            for s in watch.sensors { json.string(s) }
            json.endArray()
        }
    }

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
}
