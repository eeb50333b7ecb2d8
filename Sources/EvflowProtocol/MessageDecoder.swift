import InputModel

/// Reads the members of one decoded server message.
struct MessageDecoder {
    let object: [String: JSONValue]
    let naming: EventNaming

    mutating func decode() throws(DecodingFailure) -> ServerMessage {
        guard case .string(let cls)? = object["class"] else { throw DecodingFailure("no string member 'class'") }
        let o = Obj(object, in: cls)
        switch cls {
        case "VERSION":
            return .version(release: try o.string("release"), protoMajor: Int(try o.int("proto_major")),
                            protoMinor: Int(try o.int("proto_minor")),
                            keys: try o.optionalString("keys").flatMap { KeyVisibility(rawValue: $0) })
        case "DEVICES":
            return .devices(try o.array("devices").map { v throws(DecodingFailure) in try device(v, detail: false) },
                            sensors: try (o.optionalArray("sensors") ?? []).map { v throws(DecodingFailure) in try sensor(v, detail: false) },
                            tag: try tag(o))
        case "STATE":
            if o.value("sensor") != nil { return .sensorState(try sensorState(o), tag: try tag(o)) }
            return .state(try stateReport(o), tag: try tag(o))
        case "SAMPLE":
            return .sample(try sample(o))
        case "SENSOR":
            return .sensor(try sensorNotice(o))
        case "GESTURE":
            return .gesture(try gesture(o))
        case "BATTERY":
            return .battery(try batteryMessage(o))
        case "STATS":
            return .stats(try stats(o), tag: try tag(o))
        case "WATCH":
            return try watch(o)
        case "UNWATCH":
            return .unwatch(tag: try tag(o))
        case "PING":
            return .ping(now: try o.int("now"), tag: try tag(o))
        case "METRICS":
            return .metrics(text: try o.string("text"), format: try o.string("format"), tag: try tag(o))
        case "LATENCY":
            return .latency(try latency(o), tag: try tag(o))
        case "ACCESSIBILITY":
            return .accessibility(try accessibility(o), tag: try tag(o))
        case "ERROR":
            return .error(ErrorReply(message: try o.string("message"), requestClass: try o.optionalString("request_class"),
                                     field: try o.optionalString("field"), tag: try tag(o)))
        case "CLOSE":
            return .close(CloseNotice(reasonText: try o.string("reason"), message: try o.string("message")))
        case "DEVICE":
            let info = try device(try o.required("device"), detail: false)
            switch try o.string("action") {
            case "added": return .device(.added(info))
            case "removed": return .device(.removed(info))
            case "inaccessible": return .device(.inaccessible(info, reason: try o.optionalString("reason") ?? ""))
            case let a: throw DecodingFailure("DEVICE: unknown action '\(a)'")
            }
        default:
            return .other(class: cls)
        }
    }

    func tag(_ o: Obj) throws(DecodingFailure) -> RequestTag? {
        switch o.object["id"] {
        case nil, .null?: return nil
        case .string(let s)?: return .string(s)
        case .integer(let n)?: return .integer(n)
        default: throw o.wrong("id")
        }
    }

    func output(_ value: JSONValue) throws(DecodingFailure) -> DeviceOutputStatus {
        let o = try Obj(value, in: "output")
        guard let mode = OutputMode(rawValue: try o.string("mode")) else { throw o.wrong("mode") }
        guard let grab = DeviceOutputStatus.Grab(rawValue: try o.string("grab")) else { throw o.wrong("grab") }
        return DeviceOutputStatus(mode: mode, virtualNode: try o.optionalString("virtual_node"), grab: grab,
                                  reason: try o.optionalString("reason"))
    }

    func device(_ value: JSONValue, detail: Bool) throws(DecodingFailure) -> DeviceInfo {
        let o = try Obj(value, in: "device")
        func hex(_ k: String) throws(DecodingFailure) -> UInt16 {
            guard let v = UInt16(try o.string(k), radix: 16) else { throw o.wrong(k) }
            return v
        }
        let inputID = InputID(bustype: try hex("bus"), vendor: try hex("vendor"), product: try hex("product"),
                              version: try hex("version"))
        var classes = Set<DeviceClass>()
        for c in try o.array("classes") {
            guard case .string(let s) = c else { throw o.wrong("classes") }
            if let cls = DeviceClass(rawValue: s) { classes.insert(cls) }   // unknown classes: ignored
        }
        var info = DeviceInfo(name: try o.string("name"), inputID: inputID, phys: try o.optionalString("phys"),
                              uniq: try o.optionalString("uniq"), devnode: try o.optionalString("devnode"),
                              classes: classes, id: DeviceID(rawValue: try o.string("id")))
        if let v = o.object["output"] { info.output = try output(v) }
        if let v = o.value("gestures") { info.gestures = try gestures(v) }
        if let v = o.value("battery") { info.battery = try battery(v) }
        guard detail else { return info }
        for (typeKey, codes) in try o.optionalObject("capabilities") ?? [:] {
            let type = try typeNumber(typeKey)
            guard case .array(let list) = codes else { throw o.wrong("capabilities") }
            info.capabilities[type] = Set(try list.map { v throws(DecodingFailure) in try code(v, type: type) })
        }
        for (codeKey, v) in try o.optionalObject("abs_info") ?? [:] {
            let a = try Obj(v, in: "abs_info")
            func i(_ k: String) throws(DecodingFailure) -> Int32 { Int32(truncatingIfNeeded: try a.int(k)) }
            info.absInfo[try code(.string(codeKey), type: EventType.abs)] =
                AbsInfo(value: try i("value"), minimum: try i("min"), maximum: try i("max"), fuzz: try i("fuzz"),
                        flat: try i("flat"), resolution: try i("resolution"))
        }
        for p in try o.optionalArray("props") ?? [] {
            switch p {
            case .integer(let n): info.inputProperties.insert(UInt16(truncatingIfNeeded: n))
            case .string(let s):
                guard let n = EventNames.property(named: s) ?? UInt16(s) else { throw o.wrong("props") }
                info.inputProperties.insert(n)
            default: throw o.wrong("props")
            }
        }
        for (k, v) in try o.optionalObject("udev") ?? [:] {
            guard case .string(let s) = v else { throw o.wrong("udev") }
            info.properties[k] = s
        }
        return info
    }

    func typeNumber(_ text: String) throws(DecodingFailure) -> UInt16 {
        guard let t = naming.typeNumber(text) ?? UInt16(text) else { throw DecodingFailure("unknown event type '\(text)'") }
        return t
    }

    /// A type as sent in an event: a name or an integer.
    func type(_ value: JSONValue) throws(DecodingFailure) -> UInt16 {
        switch value {
        case .string(let s): return try typeNumber(s)
        case .integer(let n) where n >= 0 && n <= Int64(UInt16.max): return UInt16(n)
        default: throw DecodingFailure("bad event type \(value)")
        }
    }

    /// A code of `type`: its name, an integer, or (as an object key) its decimal digits.
    func code(_ value: JSONValue, type: UInt16) throws(DecodingFailure) -> UInt16 {
        switch value {
        case .string(let s):
            if let c = naming.codeNumber(s), c.type == type { return c.code }
            if let n = UInt16(s) { return n }
            throw DecodingFailure("unknown event code '\(s)'")
        case .integer(let n) where n >= 0 && n <= Int64(UInt16.max): return UInt16(n)
        default: throw DecodingFailure("bad event code \(value)")
        }
    }

    func codeValues(_ o: Obj, _ key: String, type: UInt16) throws(DecodingFailure) -> [UInt16: Int32] {
        var out: [UInt16: Int32] = [:]
        for (k, v) in try o.optionalObject(key) ?? [:] {
            guard case .integer(let n) = v else { throw o.wrong(key) }
            out[try code(.string(k), type: type)] = Int32(truncatingIfNeeded: n)
        }
        return out
    }

    func counts(_ o: Obj, _ key: String) throws(DecodingFailure) -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for (k, v) in try o.optionalObject(key) ?? [:] {
            guard case .integer(let n) = v, n >= 0 else { throw o.wrong(key) }
            out[k] = UInt64(n)
        }
        return out
    }

    func stateReport(_ o: Obj) throws(DecodingFailure) -> DeviceStateReport {
        var r = DeviceStateReport(device: try device(try o.required("device"), detail: true))
        r.keysDown = try o.array("keys_down").map { v throws(DecodingFailure) in try code(v, type: EventType.key) }
        r.abs = try codeValues(o, "abs", type: EventType.abs)
        r.switches = try codeValues(o, "switches", type: EventType.sw)
        r.leds = try codeValues(o, "leds", type: EventType.led)
        r.lastEventTime = try o.optionalInt("last_event")
        let c = try Obj(try o.required("counters"), in: "counters")
        func u(_ k: String) throws(DecodingFailure) -> UInt64 { UInt64(clamping: try c.int(k)) }
        r.counters = DeviceCounters(framesIn: try u("frames_in"), eventsIn: try u("events_in"),
                                    framesOut: try u("frames_out"), eventsOut: try u("events_out"),
                                    synDropped: try u("syn_dropped"),
                                    mscDropped: UInt64(clamping: try c.optionalInt("msc_dropped") ?? 0),
                                    droppedByFilter: try counts(c, "dropped"))
        for (k, v) in try c.optionalObject("chatter_by_key") ?? [:] {
            guard case .integer(let n) = v, n >= 0 else { throw c.wrong("chatter_by_key") }
            r.counters.chatterByKey[try code(.string(k), type: EventType.key)] = UInt64(n)
        }
        return r
    }

    func latency(_ o: Obj) throws(DecodingFailure) -> LatencyReport {
        guard let clock = LatencyClock(rawValue: try o.string("clock")) else { throw o.wrong("clock") }
        func stages(_ v: JSONValue, _ context: String) throws(DecodingFailure) -> [LatencyStage: LatencySummary] {
            let s = try Obj(v, in: context)
            var out: [LatencyStage: LatencySummary] = [:]
            for (name, value) in s.object {
                guard let stage = LatencyStage(rawValue: name) else { continue }   // a later version's
                let m = try Obj(value, in: "\(context).\(name)")
                func u(_ k: String) throws(DecodingFailure) -> UInt64 { UInt64(clamping: try m.int(k)) }
                out[stage] = LatencySummary(count: try u("count"), p50: try u("p50"), p90: try u("p90"),
                                            p99: try u("p99"), p999: try u("p99_9"), max: try u("max"))
            }
            return out
        }
        var report = LatencyReport(clock: clock, total: try stages(try o.required("total"), "total"))
        for (id, v) in try o.optionalObject("devices") ?? [:] {
            report.devices[DeviceID(rawValue: id)] = try stages(v, "devices")
        }
        return report
    }

    func stats(_ o: Obj) throws(DecodingFailure) -> ServerStats {
        var closed: [CloseReason: UInt64] = [:]
        for (k, n) in try counts(o, "closed") {
            if let reason = CloseReason(rawValue: k) { closed[reason] = n }
        }
        var list: [ClientStats] = []
        for v in try o.array("client_list") {
            let c = try Obj(v, in: "client_list")
            let watching = try c.optionalBool("watching") ?? false
            var stream: StreamKind?
            if watching, let s = try c.optionalString("stream") {
                guard let k = StreamKind(rawValue: s) else { throw c.wrong("stream") }
                stream = k
            }
            list.append(ClientStats(
                client: UInt64(clamping: try c.int("client")),
                pid: try c.optionalInt("pid").map { Int32(truncatingIfNeeded: $0) },
                uid: try c.optionalInt("uid").map { UInt32(truncatingIfNeeded: $0) },
                tag: try tag(c), stream: stream, sent: UInt64(clamping: try c.int("sent")),
                dropped: UInt64(clamping: try c.int("dropped")), buffered: Int(try c.int("buffered"))))
        }
        var s = ServerStats(release: try o.string("release"), uptime: try o.number("uptime"), now: try o.int("now"),
                            devices: Int(try o.int("devices")), clients: Int(try o.int("clients")),
                            watchers: Int(try o.int("watchers")), liveResources: Int(try o.int("live_resources")),
                            droppedByFilter: try counts(o, "dropped"), closed: closed, clientList: list)
        for (id, v) in try o.optionalObject("device_dropped") ?? [:] {
            s.deviceDropped[DeviceID(rawValue: id)] = try counts(Obj([id: v], in: "device_dropped"), id)
        }
        for (id, v) in try o.optionalObject("device_output") ?? [:] {
            let c = try Obj(v, in: "device_output")
            s.deviceOutput[DeviceID(rawValue: id)] = DeviceOutputCounters(framesWritten: Int(try c.int("frames_written")),
                                                                          writeErrors: Int(try c.int("write_errors")))
        }
        return s
    }

    func watch(_ o: Obj) throws(DecodingFailure) -> ServerMessage {
        // The response less `matched` is a WATCH request for the same selection (§4): read
        // it with the request parser, so both sides agree on the selection's syntax.
        var request = object
        let matchedValue = request.removeValue(forKey: "matched")
        let parsed: Request
        do {
            parsed = try Request.parse(object: request, naming: naming)
        } catch {
            throw DecodingFailure("WATCH response: \(error.message)")
        }
        guard case .watch(let w) = parsed.kind else { throw DecodingFailure("WATCH response is not a WATCH") }
        var matched: [DeviceID] = []
        if let matchedValue {
            guard case .array(let ids) = matchedValue else { throw o.wrong("matched") }
            for id in ids {
                guard case .string(let s) = id else { throw o.wrong("matched") }
                matched.append(DeviceID(rawValue: s))
            }
        }
        return .watch(w, matched: matched, tag: parsed.tag)
    }
}
