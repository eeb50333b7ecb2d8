import Foundation
import InputModel

/// Plain-text tables and lines for people (the default output; `--json` prints the replies).
enum Render {
    /// Columns padded to their widest cell; the last column is not padded.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let columns = header.count
        var widths = [Int](repeating: 0, count: columns)
        for row in all { for (i, cell) in row.enumerated() where i < columns { widths[i] = max(widths[i], cell.count) } }
        return all.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// `DEVICES`: id, name, classes, node.
    static func devices(_ reply: [String: Any]) -> String {
        let list = reply["devices"] as? [[String: Any]] ?? []
        if list.isEmpty { return "no devices\n" }
        return table(["ID", "NAME", "CLASSES", "NODE"], list.map { d in
            [d["id"] as? String ?? "", d["name"] as? String ?? "",
             (d["classes"] as? [String] ?? []).joined(separator: ","), d["devnode"] as? String ?? "-"]
        })
    }

    /// Monotonic nanoseconds as seconds with microseconds.
    static func time(_ value: Any?) -> String {
        guard let ns = int(value) else { return "-" }
        return String(format: "%.6f", Double(ns) / 1e9)
    }

    static func int(_ value: Any?) -> Int64? {
        if let n = value as? Int64 { return n }
        if let n = value as? Int { return Int64(n) }
        if let n = value as? NSNumber { return n.int64Value }
        return nil
    }

    static func text(_ value: Any?) -> String {
        switch value {
        case let s as String: return s
        case let n as NSNumber: return n.stringValue
        case nil: return "-"
        default: return "\(value!)"
        }
    }

    /// `STATE`: a summary block, then the counters.
    static func state(_ reply: [String: Any]) -> String {
        let d = reply["device"] as? [String: Any] ?? [:]
        var out = ""
        func line(_ k: String, _ v: String) { out += k.padding(toLength: 12, withPad: " ", startingAt: 0) + v + "\n" }
        line("device", "\(text(d["name"])) (\(text(d["id"])))")
        line("ids", "bus \(text(d["bus"])) vendor \(text(d["vendor"])) product \(text(d["product"])) version \(text(d["version"]))")
        line("classes", (d["classes"] as? [String] ?? []).joined(separator: ", "))
        if let node = d["devnode"] as? String { line("node", node) }
        let keys = (reply["keys_down"] as? [Any] ?? []).map(text)
        line("keys down", keys.isEmpty ? "none" : keys.joined(separator: " "))
        for (label, member) in [("axes", "abs"), ("switches", "switches"), ("leds", "leds")] {
            let values = reply[member] as? [String: Any] ?? [:]
            if !values.isEmpty {
                line(label, values.keys.sorted().map { "\($0)=\(text(values[$0]))" }.joined(separator: " "))
            }
        }
        line("last event", time(reply["last_event"]))
        let c = reply["counters"] as? [String: Any] ?? [:]
        line("frames", "\(text(c["frames_in"])) in, \(text(c["frames_out"])) out")
        line("events", "\(text(c["events_in"])) in, \(text(c["events_out"])) out")
        line("syn_dropped", text(c["syn_dropped"]))
        let dropped = c["dropped"] as? [String: Any] ?? [:]
        line("dropped", dropped.isEmpty ? "none" : dropped.keys.sorted().map { "\($0)=\(text(dropped[$0]))" }.joined(separator: " "))
        return out
    }

    /// `STATS`: a summary, then one row per client.
    static func stats(_ reply: [String: Any]) -> String {
        var out = ""
        func line(_ k: String, _ v: String) { out += k.padding(toLength: 16, withPad: " ", startingAt: 0) + v + "\n" }
        line("release", text(reply["release"]))
        line("uptime", String(format: "%.1f s", (reply["uptime"] as? Double) ?? 0))
        line("devices", text(reply["devices"]))
        line("clients", "\(text(reply["clients"])) (\(text(reply["watchers"])) watching)")
        line("live resources", text(reply["live_resources"]))
        let dropped = reply["dropped"] as? [String: Any] ?? [:]
        line("filter drops", dropped.isEmpty ? "none" : dropped.keys.sorted().map { "\($0)=\(text(dropped[$0]))" }.joined(separator: " "))
        let closed = reply["closed"] as? [String: Any] ?? [:]
        line("closed", closed.keys.sorted().map { "\($0)=\(text(closed[$0]))" }.joined(separator: " "))
        let perDevice = reply["device_dropped"] as? [String: Any] ?? [:]
        if !perDevice.isEmpty {
            out += "\n" + table(["DEVICE", "DROPPED"], perDevice.keys.sorted().map { id in
                let counts = perDevice[id] as? [String: Any] ?? [:]
                return [id, counts.isEmpty ? "none" : counts.keys.sorted().map { "\($0)=\(text(counts[$0]))" }.joined(separator: " ")]
            })
        }
        let clients = reply["client_list"] as? [[String: Any]] ?? []
        if !clients.isEmpty {
            out += "\n" + table(["CLIENT", "PID", "UID", "ID", "STREAM", "SENT", "DROPPED", "BUFFERED"], clients.map { c in
                [text(c["client"]), text(c["pid"]), text(c["uid"]), text(c["id"]),
                 (c["watching"] as? Bool ?? false) ? text(c["stream"]) : "-",
                 text(c["sent"]), text(c["dropped"]), text(c["buffered"])]
            })
        }
        return out
    }

    /// One stream message as one line.
    static func streamLine(_ m: [String: Any]) -> String {
        switch m["class"] as? String {
        case "FRAME":
            let events = (m["events"] as? [[String: Any]] ?? []).map { e in "\(text(e["code"])) \(text(e["value"]))" }
            return "\(time(m["time"]))  \(text(m["device"]))  \(events.joined(separator: ", "))"
        case "EVENT":
            return "\(time(m["time"]))  \(text(m["device"]))  \(text(m["code"])) \(text(m["value"])) (event)"
        case "DEVICE":
            let d = m["device"] as? [String: Any] ?? [:]
            return "device \(text(m["action"])): \(text(d["name"])) (\(text(d["id"])))"
        default:
            return "\(text(m["class"]))"
        }
    }
}

/// Turns a `STATE` reply's device description back into a `DeviceInfo` (for `record`).
enum DeviceDescription {
    static func hex(_ value: Any?) -> UInt16 { UInt16(value as? String ?? "0", radix: 16) ?? 0 }

    static func type(_ value: Any) -> UInt16? {
        if let s = value as? String { return EventNames.type(named: s) ?? UInt16(s) }
        return Render.int(value).map { UInt16(truncatingIfNeeded: $0) }
    }

    static func code(_ value: Any, type: UInt16) -> UInt16? {
        if let s = value as? String { return EventNames.code(named: s, type: type) ?? UInt16(s) }
        return Render.int(value).map { UInt16(truncatingIfNeeded: $0) }
    }

    static func info(from d: [String: Any]) -> DeviceInfo {
        var caps: [UInt16: Set<UInt16>] = [:]
        for (typeName, codes) in d["capabilities"] as? [String: Any] ?? [:] {
            guard let t = type(typeName) else { continue }
            caps[t] = Set((codes as? [Any] ?? []).compactMap { code($0, type: t) })
        }
        var abs: [UInt16: AbsInfo] = [:]
        for (codeName, v) in d["abs_info"] as? [String: Any] ?? [:] {
            guard let c = code(codeName, type: EventType.abs), let a = v as? [String: Any] else { continue }
            func f(_ k: String) -> Int32 { Int32(truncatingIfNeeded: Render.int(a[k]) ?? 0) }
            abs[c] = AbsInfo(value: f("value"), minimum: f("min"), maximum: f("max"), fuzz: f("fuzz"), flat: f("flat"),
                             resolution: f("resolution"))
        }
        let props = Set((d["props"] as? [Any] ?? []).compactMap { p -> UInt16? in
            if let s = p as? String { return EventNames.property(named: s) }
            return Render.int(p).map { UInt16(truncatingIfNeeded: $0) }
        })
        let classes = Set((d["classes"] as? [String] ?? []).compactMap(DeviceClass.init(rawValue:)))
        return DeviceInfo(name: d["name"] as? String ?? "", inputID: InputID(bustype: hex(d["bus"]), vendor: hex(d["vendor"]),
                                                                           product: hex(d["product"]), version: hex(d["version"])),
                          phys: d["phys"] as? String, uniq: d["uniq"] as? String, devnode: d["devnode"] as? String,
                          classes: classes, properties: d["udev"] as? [String: String] ?? [:], capabilities: caps,
                          absInfo: abs, inputProperties: props,
                          id: (d["id"] as? String).map(DeviceID.init(rawValue:)))
    }
}
