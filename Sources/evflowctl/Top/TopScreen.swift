import EvflowProtocol
import Foundation
import InputModel
import Pipeline

/// What `evflowctl top` shows, as plain values: one sample of the daemon (DEVICES, STATE per
/// device, LATENCY, STATS) and the screen made from two of them. Pure, so the arithmetic,
/// the sorting, the escaping and the truncation are unit-tested without a terminal.
struct TopSample {
    /// When the sample was taken (monotonic ns), for the rates.
    var time: Int64
    /// STATS.
    var stats: ServerStats
    /// STATE of every present device, in DEVICES order.
    var states: [DeviceStateReport]
    /// LATENCY.
    var latency: LatencyReport
}

/// The columns `top` sorts by, with the key that picks each.
enum TopSort: String, CaseIterable {
    // The raw values are what `--sort` takes.
    case name, eventsIn = "in", eventsOut = "out", filtered, chatter, p99

    /// The key that picks this column.
    var key: Character {
        switch self {
        case .name: "n"
        case .eventsIn: "i"
        case .eventsOut: "o"
        case .filtered: "f"
        case .chatter: "c"
        case .p99: "l"
        }
    }

    /// The column's heading.
    var heading: String {
        switch self {
        case .name: "DEVICE"
        case .eventsIn: "IN/s"
        case .eventsOut: "OUT/s"
        case .filtered: "FILT%"
        case .chatter: "CHATTER"
        case .p99: "P99"
        }
    }
}

/// One device row.
struct TopDeviceRow: Equatable {
    var id: String, name: String
    var eventsIn: Double, eventsOut: Double
    /// Share of the interval's events the filters took out (nil: no event).
    var filtered: Double?
    /// Key-chatter drops since the device appeared.
    var chatter: UInt64
    var p50: UInt64?, p99: UInt64?
    var held: [String]
}

/// One client row.
struct TopClientRow: Equatable {
    var client: UInt64
    var pid: Int32?
    var tag: String
    var stream: String
    var sentPerSecond: Double
    var dropped: UInt64
    var buffered: Int
}

enum TopScreen {
    /// Device rows from two samples (`previous` nil: the first sample; rates are 0).
    static func deviceRows(_ now: TopSample, previous: TopSample?, sort: TopSort, descending: Bool) -> [TopDeviceRow] {
        let seconds = previous.map { Double(now.time - $0.time) / 1e9 } ?? 0
        var rows: [TopDeviceRow] = now.states.map { s in
            let before = previous?.states.first { $0.device.id == s.device.id }?.counters
            let c = s.counters
            // A device that came back (counters restart) is measured from zero.
            let dIn = before.map { c.eventsIn >= $0.eventsIn ? c.eventsIn - $0.eventsIn : c.eventsIn } ?? 0
            let dOut = before.map { c.eventsOut >= $0.eventsOut ? c.eventsOut - $0.eventsOut : c.eventsOut } ?? 0
            let stages = now.latency.devices[s.device.id]?[.filtered]
            return TopDeviceRow(
                id: s.device.id.rawValue, name: s.device.name,
                eventsIn: seconds > 0 ? Double(dIn) / seconds : 0, eventsOut: seconds > 0 ? Double(dOut) / seconds : 0,
                filtered: dIn > 0 ? Double(dIn - min(dOut, dIn)) / Double(dIn) : nil,
                chatter: c.droppedByFilter[FilterKind.keyChatter.rawValue] ?? 0,
                p50: stages.flatMap { $0.count > 0 ? $0.p50 : nil }, p99: stages.flatMap { $0.count > 0 ? $0.p99 : nil },
                held: s.keysDown.sorted().map { EventNames.codeText(type: EventType.key, code: $0) })
        }
        rows.sort { a, b in
            let ordered: Bool
            switch sort {
            case .name: ordered = a.name == b.name ? a.id < b.id : a.name < b.name
            case .eventsIn: ordered = a.eventsIn < b.eventsIn
            case .eventsOut: ordered = a.eventsOut < b.eventsOut
            case .filtered: ordered = (a.filtered ?? -1) < (b.filtered ?? -1)
            case .chatter: ordered = a.chatter < b.chatter
            case .p99: ordered = (a.p99 ?? 0) < (b.p99 ?? 0)
            }
            return descending ? !ordered && !equal(a, b, sort) : ordered
        }
        return rows
    }

    private static func equal(_ a: TopDeviceRow, _ b: TopDeviceRow, _ sort: TopSort) -> Bool {
        switch sort {
        case .name: a.name == b.name && a.id == b.id
        case .eventsIn: a.eventsIn == b.eventsIn
        case .eventsOut: a.eventsOut == b.eventsOut
        case .filtered: a.filtered == b.filtered
        case .chatter: a.chatter == b.chatter
        case .p99: a.p99 == b.p99
        }
    }

    /// Client rows, by client number.
    static func clientRows(_ now: TopSample, previous: TopSample?) -> [TopClientRow] {
        let seconds = previous.map { Double(now.time - $0.time) / 1e9 } ?? 0
        return now.stats.clientList.sorted { $0.client < $1.client }.map { c in
            let before = previous?.stats.clientList.first { $0.client == c.client }?.sent
            let d = before.map { c.sent >= $0 ? c.sent - $0 : 0 } ?? 0
            return TopClientRow(client: c.client, pid: c.pid, tag: Render.tag(c.tag), stream: c.stream?.rawValue ?? "-",
                                sentPerSecond: seconds > 0 ? Double(d) / seconds : 0, dropped: c.dropped, buffered: c.buffered)
        }
    }

    /// `s` (escaped) cut or padded to exactly `width` terminal columns (cut text ends in `…`).
    static func fit(_ s: String, _ width: Int, right: Bool = false) -> TerminalText {
        TerminalText(escaping: s).fit(width, right: right)
    }

    static func rate(_ v: Double) -> String { v >= 10 ? String(format: "%.0f", v) : String(format: "%.1f", v) }

    /// The screen: a header, the device table, the client table; every line at most `width`
    /// terminal columns (never wrapped: wide characters count 2, combining marks 0) and at most
    /// `height` lines.
    static func lines(_ now: TopSample, previous: TopSample?, sort: TopSort, descending: Bool,
                      width: Int, height: Int) -> [TerminalText] {
        var out: [TerminalText] = []
        let s = now.stats
        out.append("evflowd \(s.release), up \(Render.duration(UInt64(max(0, s.uptime) * 1e9))), "
                   + "\(s.devices) device(s), \(s.clients) client(s)")
        out.append("sort: \(sort.heading) \(descending ? "↓" : "↑")   keys: "
                   + "\(TopSort.allCases.map { String($0.key) }.joined(separator: " ")) sort, r reverse, q quit")
        out.append("")
        let fixed = 7 + 7 + 6 + 8 + 9 + 9   // the numeric columns
        let nameWidth = max(12, min(32, width - fixed - 12))
        out.append(fit("DEVICE", nameWidth) + fit("IN/s", 7, right: true) + fit("OUT/s", 7, right: true)
                   + fit("FILT%", 6, right: true) + fit("CHATTER", 8, right: true) + fit("P50", 9, right: true)
                   + fit("P99", 9, right: true) + "  HELD")
        for r in deviceRows(now, previous: previous, sort: sort, descending: descending) {
            let latency = { (v: UInt64?) in v.map { Render.duration($0) } ?? "-" }
            out.append(fit(r.name, nameWidth) + fit(rate(r.eventsIn), 7, right: true)
                       + fit(rate(r.eventsOut), 7, right: true)
                       + fit(r.filtered.map { String(format: "%.0f%%", $0 * 100) } ?? "-", 6, right: true)
                       + fit(String(r.chatter), 8, right: true) + fit(latency(r.p50), 9, right: true)
                       + fit(latency(r.p99), 9, right: true) + "  \(r.held.isEmpty ? "-" : r.held.joined(separator: " "))")
        }
        out.append("")
        out.append(fit("CLIENT", 7) + fit("PID", 8) + fit("ID", 22) + fit("STREAM", 9) + fit("SENT/s", 8, right: true)
                   + fit("DROPPED", 9, right: true) + fit("BUFFERED", 10, right: true))
        for c in clientRows(now, previous: previous) {
            out.append(fit(String(c.client), 7) + fit(c.pid.map { String($0) } ?? "-", 8) + fit(c.tag, 22)
                       + fit(c.stream, 9) + fit(rate(c.sentPerSecond), 8, right: true) + fit(String(c.dropped), 9, right: true)
                       + fit(String(c.buffered), 10, right: true))
        }
        // Cut by display width; the padding a cut leaves at the end goes too.
        return out.prefix(max(0, height)).map { line in
            guard line.width > width else { return line }
            let cut = line.fit(width).text
            return TerminalText(escaping: String(cut.reversed().drop { $0 == " " }.reversed()))
        }
    }
}
