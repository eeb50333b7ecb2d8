import EvflowProtocol
import Foundation
import InputModel

/// Plain-text tables and lines for people (the default output; `--json` prints the replies).
/// Every renderer builds `TerminalText`: each cell and each interpolated value passes the one
/// escaping rule (`VisibleText`), whoever controls it.
enum Render {
    /// Columns padded to their widest cell (in terminal columns); the last column is not
    /// padded. Every cell is escaped before it is measured.
    static func table(_ header: [String], _ rows: [[String]]) -> TerminalText {
        table(header, rows.map { $0.map(TerminalText.init(escaping:)) })
    }

    /// A table of cells made of several values (`"\(channel) (\(unit))"`): each value was
    /// escaped on its own, so a combining mark that begins one is written out too.
    static func table(_ header: [String], _ rows: [[TerminalText]]) -> TerminalText {
        let all = [header.map(TerminalText.init(escaping:))] + rows
        let columns = header.count
        var widths = [Int](repeating: 0, count: columns)
        for row in all { for (i, cell) in row.enumerated() where i < columns { widths[i] = max(widths[i], cell.width) } }
        return all.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 || i >= columns ? cell : cell.padded(to: widths[i])
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// `DEVICES`: id, name, classes, node, the battery (from a 1.8 server, when a device has
    /// one) and the output (from a 1.3 server).
    static func devices(_ list: [DeviceInfo]) -> TerminalText {
        if list.isEmpty { return "no devices\n" }
        let withOutput = list.contains { $0.output != nil }
        let withBattery = list.contains { $0.battery != nil }
        let header = ["ID", "NAME", "CLASSES", "NODE"] + (withBattery ? ["BATTERY"] : []) + (withOutput ? ["OUTPUT"] : [])
        return table(header, list.map { d -> [TerminalText] in
            [TerminalText(escaping: d.id.rawValue), TerminalText(escaping: d.name),
             TerminalText(escaping: d.classes.map(\.rawValue).sorted().joined(separator: ",")),
             TerminalText(escaping: d.devnode ?? "-")]
                + (withBattery ? [d.battery.map(battery) ?? "-"] : []) + (withOutput ? [output(d.output)] : [])
        })
    }

    /// A battery in a few words: `87% discharging`, `low, charging` (only a level), `unknown`.
    static func battery(_ b: DeviceBattery) -> TerminalText {
        let charge: TerminalText = b.percent.map { "\($0)%" } ?? "\((b.level ?? .unknown).rawValue),"
        return "\(charge) \(b.status.rawValue)"
    }

    /// A device's output in a few words: `observe`; `virtual, grabbed → /dev/input/event9`;
    /// `virtual, waiting for release → …`; `virtual, not grabbed: <reason>`.
    static func output(_ o: DeviceOutputStatus?) -> TerminalText {
        guard let o else { return "-" }
        switch (o.mode, o.grab) {
        case (.observe, _): return "observe"
        case (.virtual, .grabbed): return "virtual, grabbed → \(o.virtualNode ?? "?")"
        case (.virtual, .waiting): return "virtual, waiting for release → \(o.virtualNode ?? "?")"
        case (.virtual, .none): return "virtual, \(o.reason ?? "not grabbed")"
        }
    }

    /// Monotonic nanoseconds as seconds with microseconds.
    static func time(_ ns: Int64?) -> String {
        guard let ns else { return "-" }
        return String(format: "%.6f", Double(ns) / 1e9)
    }

    /// A code as libevdev names it, or its number.
    static func code(_ type: UInt16, _ code: UInt16) -> String {
        EventNames.codeName(type: type, code: code) ?? String(code)
    }

    static func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }

    static func counts(_ c: [String: UInt64]) -> TerminalText {
        c.isEmpty ? "none" : c.keys.sorted().map { "\($0)=\(c[$0]!)" as TerminalText }.joined(separator: " ")
    }

    static func tag(_ t: RequestTag?) -> String {
        switch t {
        case .string(let s)?: return s
        case .integer(let n)?: return String(n)
        case nil: return "-"
        }
    }

    /// `STATE`: a summary block, then the counters.
    static func state(_ r: DeviceStateReport) -> TerminalText {
        let d = r.device
        var out: TerminalText = ""
        func line(_ k: TerminalText, _ v: TerminalText) { out += k.padded(to: 12) + v + "\n" }
        line("device", "\(d.name) (\(d.id))")
        let i = d.inputID
        line("ids", "bus \(hex4(i.bustype)) vendor \(hex4(i.vendor)) product \(hex4(i.product)) version \(hex4(i.version))")
        line("classes", "\(d.classes.map(\.rawValue).sorted().joined(separator: ", "))")
        if let node = d.devnode { line("node", "\(node)") }
        if d.output != nil { line("output", output(d.output)) }
        if let b = d.battery { line("battery", "\(battery(b)) (\(b.supply))") }
        let keys = r.keysDown.sorted().map { code(EventType.key, $0) }
        line("keys down", keys.isEmpty ? "none" : "\(keys.joined(separator: " "))")
        for (label, type, values) in [("axes", EventType.abs, r.abs), ("switches", EventType.sw, r.switches),
                                      ("leds", EventType.led, r.leds)] where !values.isEmpty {
            let named = values.map { (code(type, $0.key), $0.value) }.sorted { $0.0 < $1.0 }
            line(TerminalText(escaping: label), named.map { "\($0.0)=\($0.1)" as TerminalText }.joined(separator: " "))
        }
        line("last event", "\(time(r.lastEventTime))")
        let c = r.counters
        line("frames", "\(c.framesIn) in, \(c.framesOut) out")
        line("events", "\(c.eventsIn) in, \(c.eventsOut) out")
        line("syn_dropped", "\(c.synDropped)")
        line("msc_dropped", "\(c.mscDropped)")
        line("dropped", counts(c.droppedByFilter))
        return out
    }

    /// `STATS`: a summary, then one row per client.
    static func stats(_ s: ServerStats) -> TerminalText {
        var out: TerminalText = ""
        func line(_ k: TerminalText, _ v: TerminalText) { out += k.padded(to: 16) + v + "\n" }
        line("release", "\(s.release)")
        line("uptime", "\(String(format: "%.1f s", s.uptime))")
        line("devices", "\(s.devices)")
        line("clients", "\(s.clients) (\(s.watchers) watching)")
        line("live resources", "\(s.liveResources)")
        line("filter drops", counts(s.droppedByFilter))
        line("closed", CloseReason.allCases.sorted { $0.rawValue < $1.rawValue }
            .map { "\($0.rawValue)=\(s.closed[$0] ?? 0)" as TerminalText }.joined(separator: " "))
        if !s.deviceDropped.isEmpty {
            out += "\n" + table(["DEVICE", "DROPPED"], s.deviceDropped.keys.sorted().map { id in
                [id.rawValue, counts(s.deviceDropped[id]!).text]
            })
        }
        if !s.deviceOutput.isEmpty {
            out += "\n" + table(["DEVICE", "WRITTEN", "WRITE ERRORS"], s.deviceOutput.keys.sorted().map { id in
                [id.rawValue, String(s.deviceOutput[id]!.framesWritten), String(s.deviceOutput[id]!.writeErrors)]
            })
        }
        if !s.clientList.isEmpty {
            let rows: [[String]] = s.clientList.sorted { $0.client < $1.client }.map { (c: ClientStats) -> [String] in
                let pid = c.pid.map { String($0) } ?? "-"
                let uid = c.uid.map { String($0) } ?? "-"
                return [String(c.client), pid, uid, tag(c.tag), c.stream?.rawValue ?? "-", String(c.sent),
                        String(c.dropped), String(c.buffered)]
            }
            out += "\n" + table(["CLIENT", "PID", "UID", "ID", "STREAM", "SENT", "DROPPED", "BUFFERED"], rows)
        }
        return out
    }

    /// One stream message as one line; `sensors` gives samples their channel order and units.
    static func streamLine(_ m: ServerMessage, sensors: [DeviceID: SensorInfo] = [:]) -> TerminalText {
        switch m {
        case .sensor(let change):
            let action: TerminalText = if case .added = change { "added" } else { "removed" }
            return "sensor \(action): \(change.sensor.name) (\(change.sensor.id))"
        case .sample(let s):
            let orientation: TerminalText = s.orientation.map { "  orientation \($0)" } ?? ""
            return "\(time(s.time))  \(s.device)  \(sampleValues(s.values, of: sensors[s.device]))\(orientation)"
        case .battery(let b):
            return "battery: \(b.device)  \(battery(b.battery)) (\(b.battery.supply))"
        case .gesture(let g):
            return "\(time(g.event.time))  \(g.device)  \(code(g.event.gesture.eventType, g.event.code)) \(g.event.gesture.rawValue) \(g.event.count)"
        case .frame(let f):
            let events = f.frame.events.map { e in "\(code(e.type, e.code)) \(e.value)" }
            return "\(time(f.frame.time))  \(f.device)  \(events.joined(separator: ", "))"
        case .device(let change):
            let action: TerminalText
            switch change {
            case .added: action = "added"
            case .removed: action = "removed"
            case .inaccessible(_, let reason): action = "inaccessible (\(reason))"
            }
            return "device \(action): \(change.device.name) (\(change.device.id))"
        default:
            return "\(m.messageClass)"
        }
    }
}

extension Render {
    /// A duration in nanoseconds, short: `850 ns`, `12 µs`, `1.5 ms`, `2.10 s`.
    static func duration(_ ns: UInt64) -> String {
        let v = Double(ns)
        switch ns {
        case ..<1_000: return "\(ns) ns"
        case ..<10_000: return String(format: "%.1f µs", v / 1e3)
        case ..<1_000_000: return String(format: "%.0f µs", v / 1e3)
        case ..<10_000_000: return String(format: "%.2f ms", v / 1e6)
        case ..<1_000_000_000: return String(format: "%.1f ms", v / 1e6)
        default: return String(format: "%.2f s", v / 1e9)
        }
    }

    /// `LATENCY` as tables (in total, then per device: `names` maps ids to device names) and
    /// a bar chart of the totals' p50 and p99 per stage.
    static func latency(_ r: LatencyReport, names: [DeviceID: String], device: DeviceID? = nil) -> TerminalText {
        var out: TerminalText = "clock: \(r.clock.rawValue)"
            + (r.clock == .monotonic ? " (kernel event timestamps)" : " (the replay's event times; not comparable with live figures)")
            + "\nages from the kernel's timestamp to the end of each stage\n\n"
        func table(_ title: TerminalText, _ stages: [LatencyStage: LatencySummary]) {
            out += title + "\n"
            out += pad("stage", 10) + ["count", "p50", "p90", "p99", "p99.9", "max"].map { lpad($0, 10) }.joined() + "\n"
            for stage in LatencyStage.allCases {
                guard let s = stages[stage] else { continue }
                out += pad("\(stage.rawValue)", 10) + lpad("\(s.count)", 10)
                    + [s.p50, s.p90, s.p99, s.p999, s.max].map { lpad(s.count == 0 ? "-" : "\(duration($0))", 10) }.joined() + "\n"
            }
            out += "\n"
        }
        if device == nil { table("all devices", r.total) }
        for (id, stages) in r.devices.sorted(by: { $0.key < $1.key }) where device == nil || device == id {
            table("\(names[id] ?? id.rawValue) (\(id.rawValue))", stages)
        }
        // Bars: p50 (█) and p99 (░ beyond p50), on one scale for every stage.
        let shown = device.flatMap { r.devices[$0] } ?? r.total
        let top = shown.values.map(\.p99).max() ?? 0
        if top > 0 {
            let width = 40
            for stage in LatencyStage.allCases {
                guard let s = shown[stage], s.count > 0 else { continue }
                let p50 = Int((Double(s.p50) / Double(top) * Double(width)).rounded())
                let p99 = max(p50, Int((Double(s.p99) / Double(top) * Double(width)).rounded()))
                out += pad("\(stage.rawValue)", 10) + "\(String(repeating: "█", count: p50) + String(repeating: "░", count: p99 - p50))"
                    + "\(String(repeating: " ", count: width - p99))  p50 \(duration(s.p50)), p99 \(duration(s.p99))\n"
            }
        }
        return out
    }

    private static func pad(_ s: TerminalText, _ n: Int) -> TerminalText { s.width >= n ? s + " " : s.padded(to: n) }
    private static func lpad(_ s: TerminalText, _ n: Int) -> TerminalText { s.width >= n ? " " + s : s.fit(n, right: true) }
}

extension Render {
    /// `DEVICES`' sensors: id, name, how read, channels with units.
    static func sensors(_ list: [SensorInfo]) -> TerminalText {
        table(["SENSOR", "NAME", "READING", "CHANNELS"], list.map { s in
            [s.id.rawValue, s.name, s.buffered ? "buffered" : "polled",
             s.channels.map { c in c.unit.isEmpty ? "\(c.name)" : "\(c.name) (\(c.unit))" as TerminalText }
                .joined(separator: ", ").text]
        })
    }

    /// A value with its channel's unit: `123.4 lx`.
    static func value(_ v: Double, unit: String) -> String {
        let number = String(format: "%.6g", v)
        return unit.isEmpty ? number : "\(number) \(unit)"
    }

    /// A sample's values in the sensor's channel order with units, or by name without them
    /// when the sensor is not known.
    static func sampleValues(_ values: [String: Double], of sensor: SensorInfo?) -> TerminalText {
        guard let sensor else {
            return values.keys.sorted().map { "\($0) \(value(values[$0]!, unit: ""))" as TerminalText }.joined(separator: ", ")
        }
        return sensor.channels.compactMap { c in values[c.name].map { "\(c.name) \(value($0, unit: c.unit))" as TerminalText } }
            .joined(separator: ", ")
    }

    /// A sensor's `STATE`: its description, then its last filtered and raw values.
    static func sensorState(_ r: SensorStateReport) -> TerminalText {
        let s = r.sensor
        var out: TerminalText = "\(s.name)  \(s.id)  \(s.sysname)  \(s.buffered ? "buffered" : "polled")\n"
        out += "read now:  \(r.live ? "yes" : "no (values are the last seen while it was)")\n"
        let rows = s.channels.enumerated().map { i, c -> [String] in
            func at(_ sample: SensorSample?) -> String {
                guard let sample, i < sample.values.count, sample.values[i].isFinite else { return "-" }
                return value(sample.values[i], unit: c.unit)
            }
            return [c.name, c.quantity.rawValue, at(r.filtered), at(r.raw)]
        }
        out += table(["CHANNEL", "QUANTITY", "FILTERED", "RAW"], rows)
        out += "time:      \(time(r.filtered?.time))\n"
        if let o = r.orientation { out += "orientation: \(o)\n" }
        if r.readErrors > 0 || r.failed {
            out += "read errors: \(r.readErrors)\(r.failed ? " (failed: the last 10 reads or more all failed)" : "")\n"
        }
        return out
    }
}
