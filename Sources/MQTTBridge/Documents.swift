import EvflowProtocol
import InputModel

/// The JSON documents the bridge publishes (docs/mqtt.md, "Documents"). Pure functions of what
/// evflowd reported; names are libevdev's, as on the socket.
public enum Documents {
    /// A device's retained description: the summary and capabilities from `STATE`.
    public static func description(_ d: DeviceInfo, hostname: String, naming: EventNaming = .standard) -> JSON {
        var m: [(String, JSON)] = [
            ("id", .string(d.id.rawValue)),
            ("name", .string(d.name)),
            ("host", .string(hostname)),
            ("bus", .string(hex4(d.inputID.bustype))),
            ("vendor", .string(hex4(d.inputID.vendor))),
            ("product", .string(hex4(d.inputID.product))),
            ("version", .string(hex4(d.inputID.version))),
        ]
        if let p = d.phys { m.append(("phys", .string(p))) }
        if let u = d.uniq { m.append(("uniq", .string(u))) }
        m.append(("classes", .array(d.classes.sorted().map { .string($0.rawValue) })))
        var caps: [(String, JSON)] = []
        for type in d.capabilities.keys.sorted() {
            let t = naming.typeName(type) ?? String(type)
            caps.append((t, .array(d.capabilities[type]!.sorted().map { .string(naming.codeName(type, $0) ?? String($0)) })))
        }
        m.append(("capabilities", .object(caps)))
        // The gestures evflowd computes for its keys (protocol 1.5): a reload that changes them
        // changes the description, which is what republishes the device's discovery.
        if let g = d.gestures {
            m.append(("gestures", .object([
                ("codes", .array(g.codes.map { .string(naming.codeName(EventType.key, $0) ?? String($0)) })),
                ("kinds", .array(g.kinds.map { .string($0.rawValue) })),
            ])))
        }
        return .object(m)
    }

    /// A device's retained state document: keys down, switches, LEDs, absolute axes, counters.
    /// Absent maps are written empty, so a template can always index them.
    public static func state(_ r: DeviceStateReport, naming: EventNaming = .standard) -> JSON {
        func map(_ type: UInt16, _ values: [UInt16: Int32]) -> JSON {
            .object(values.keys.sorted().map { (naming.codeName(type, $0) ?? String($0), .int(Int64(values[$0]!))) })
        }
        let c = r.counters
        var m: [(String, JSON)] = [
            ("device", .string(r.device.id.rawValue)),
            ("keys_down", .array(r.keysDown.sorted().map { .string(naming.codeName(EventType.key, $0) ?? String($0)) })),
            ("switches", map(EventType.sw, r.switches)),
            ("leds", map(EventType.led, r.leds)),
            ("abs", map(EventType.abs, r.abs)),
        ]
        if let t = r.lastEventTime { m.append(("last_event", .int(t))) }
        m.append(("counters", .object([
            ("frames_in", .int(Int64(c.framesIn))), ("events_in", .int(Int64(c.eventsIn))),
            ("frames_out", .int(Int64(c.framesOut))), ("events_out", .int(Int64(c.eventsOut))),
            ("syn_dropped", .int(Int64(c.synDropped))),
            ("dropped_total", .int(Int64(c.droppedByFilter.values.reduce(0, +)))),
            ("dropped", .object(c.droppedByFilter.keys.sorted().map { ($0, .int(Int64(c.droppedByFilter[$0]!))) })),
        ])))
        return .object(m)
    }

    /// One frame on a device's `events` topic: its time and events.
    public static func frame(_ f: InputFrame, naming: EventNaming = .standard) -> JSON {
        .object([
            ("time", .int(f.time)),
            ("events", .array(f.events.map { e in
                .object([("type", .string(naming.typeName(e.type) ?? String(e.type))),
                         ("code", .string(naming.codeName(e.type, e.code) ?? String(e.code))),
                         ("value", .int(Int64(e.value)))])
            })),
        ])
    }

    /// One event on its per-code topic.
    public static func event(_ e: InputEvent) -> JSON {
        .object([("value", .int(Int64(e.value))), ("time", .int(e.time))])
    }

    static func hex4(_ n: UInt16) -> String {
        let s = String(n, radix: 16)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
