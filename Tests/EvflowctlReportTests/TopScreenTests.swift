import EvflowProtocol
import Foundation
import InputModel
import Pipeline
import Testing
@testable import evflowctl

@Suite("Evflowctl top: rates, sorting, escaping, 80 columns")
struct TopScreenTests {
    static func device(_ name: String, id: String) -> DeviceInfo {
        var d = DeviceInfo(name: name, inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1), classes: [.keyboard],
                           capabilities: [EventType.key: [code("KEY_A")]])
        d.id = DeviceID(rawValue: id)
        return d
    }

    static func sample(at seconds: Double, _ devices: [(DeviceInfo, eventsIn: UInt64, eventsOut: UInt64, chatter: UInt64)],
                       sent: UInt64 = 0) -> TopSample {
        let states = devices.map { d in
            DeviceStateReport(device: d.0, keysDown: d.0.name.hasPrefix("K") ? [code("KEY_A")] : [],
                              counters: DeviceCounters(framesIn: d.eventsIn / 2, eventsIn: d.eventsIn, framesOut: d.eventsOut / 2,
                                                       eventsOut: d.eventsOut, droppedByFilter: [FilterKind.keyChatter.rawValue: d.chatter]))
        }
        var stats = ServerStats(release: "0.1.0", uptime: seconds, now: 0, devices: devices.count, clients: 1, watchers: 1,
                                liveResources: 0)
        stats.clientList = [ClientStats(client: 7, pid: 42, tag: .string("mqtt\u{1b}]0;x"), stream: .filtered, sent: sent)]
        let latency = LatencyReport(clock: .monotonic, devices: [devices[0].0.id: [.filtered: LatencySummary(count: 10, p50: 120_000, p99: 2_500_000)]])
        return TopSample(time: Int64(seconds * 1e9), stats: stats, states: states, latency: latency)
    }

    static let keyboard = device("Keyboard", id: "k1")
    static let evil = device("Evil\u{1b}[2J\u{7}name that is far too long to fit in any column", id: "e1")

    @Test("rates over the interval, share filtered, chatter, latency and held keys")
    func rows() {
        let a = Self.sample(at: 10, [(Self.keyboard, 100, 90, 3), (Self.evil, 0, 0, 0)], sent: 50)
        let b = Self.sample(at: 12, [(Self.keyboard, 300, 250, 5), (Self.evil, 0, 0, 0)], sent: 250)
        let rows = TopScreen.deviceRows(b, previous: a, sort: .eventsIn, descending: true)
        #expect(rows[0] == TopDeviceRow(id: "k1", name: "Keyboard", eventsIn: 100, eventsOut: 80, filtered: 0.2, chatter: 5,
                                        p50: 120_000, p99: 2_500_000, held: ["KEY_A"]))
        #expect(rows[1].filtered == nil && rows[1].eventsIn == 0)
        #expect(TopScreen.clientRows(b, previous: a)[0].sentPerSecond == 100)
        // The first sample has nothing to compare with: rates 0.
        #expect(TopScreen.deviceRows(a, previous: nil, sort: .eventsIn, descending: true)[0].eventsIn == 0)
    }

    @Test("sorting by each column, both ways")
    func sorting() {
        let a = Self.sample(at: 0, [(Self.keyboard, 0, 0, 9), (Self.evil, 0, 0, 1)])
        let b = Self.sample(at: 1, [(Self.keyboard, 10, 10, 9), (Self.evil, 50, 5, 1)])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .eventsIn, descending: true).map(\.id) == ["e1", "k1"])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .eventsIn, descending: false).map(\.id) == ["k1", "e1"])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .eventsOut, descending: true).map(\.id) == ["k1", "e1"])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .filtered, descending: true).map(\.id) == ["e1", "k1"])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .chatter, descending: true).map(\.id) == ["k1", "e1"])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .name, descending: false).map(\.id) == ["e1", "k1"])
        #expect(TopScreen.deviceRows(b, previous: a, sort: .p99, descending: true).map(\.id) == ["k1", "e1"])
    }

    @Test("80×24: no line wider than 80, no control character from a name or a tag reaches the terminal")
    func screen() {
        let a = Self.sample(at: 0, [(Self.keyboard, 0, 0, 0), (Self.evil, 0, 0, 0)])
        let b = Self.sample(at: 1, [(Self.keyboard, 10, 10, 0), (Self.evil, 50, 5, 0)])
        let lines = TopScreen.lines(b, previous: a, sort: .eventsIn, descending: true, width: 80, height: 24).map(\.text)
        #expect(lines.count <= 24)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.allSatisfy { !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f } })
        #expect(lines.contains { $0.hasPrefix("Evil\\x1b[2J\\x07name t…") })
        #expect(lines.contains { $0.hasPrefix("DEVICE") && $0.contains("IN/s") && $0.contains("P99") && $0.hasSuffix("HELD") })
        #expect(lines.contains { $0.hasPrefix("Keyboard") && $0.contains("120 µs") && $0.contains("2.50 ms") && $0.hasSuffix("KEY_A") })
        #expect(lines.contains { $0.contains("mqtt\\x1b]0;x") })
        #expect(TopScreen.lines(b, previous: a, sort: .eventsIn, descending: true, width: 40, height: 5)
            .allSatisfy { $0.width <= 40 })
        #expect(TopScreen.lines(b, previous: a, sort: .eventsIn, descending: true, width: 40, height: 5).count == 5)
    }

    /// Issue #34, finding 12: `top` padded and cut by Characters, not terminal columns: a CJK
    /// name (2 columns a character) pushed its row past 80 and the terminal wrapped it; a name
    /// with combining marks or zero-width joiners came out short. Every line of a frame must fit.
    @Test("issue #34 (12): CJK, emoji and combining names: every line fits 80 columns, columns stay aligned")
    func displayWidth() {
        let names = ["東京都のキーボード東京都のキーボード東京都のキーボード", "한국어 키보드 한국어 키보드 한국어 키보드 한국어",
                     "Keyboard 😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀", "e\u{301}\u{302}\u{303}" + String(repeating: "a\u{301}", count: 40),
                     "👩\u{200D}👩\u{200D}👧 family keyboard 👩\u{200D}👩\u{200D}👧", "ＦＵＬＬＷＩＤＴＨ　ＫＥＹＢＯＡＲＤ　ＮＡＭＥ", "K short"]
        let devices = names.enumerated().map { (Self.device($0.element, id: "d\($0.offset)"), eventsIn: UInt64(10), eventsOut: UInt64(5), chatter: UInt64(0)) }
        let a = Self.sample(at: 0, devices), b = Self.sample(at: 1, devices)
        for width in [80, 100, 40] {
            let lines = TopScreen.lines(b, previous: a, sort: .name, descending: false, width: width, height: 50)
            for line in lines {
                #expect(line.width <= width, "\(width): \(line.width) columns: \(line.text)")
            }
            // The numeric columns start at the same column on every device row.
            let rows = lines.filter { l in names.contains { n in l.text.hasPrefix(String(n.prefix(2))) } }
            #expect(rows.count == names.count)
            if width >= 80 {
                let rateColumns = Set(rows.map { row -> Int in
                    let t = row.text
                    return DisplayWidth.of(String(t[..<(t.firstIndex { $0.isASCII && $0.isNumber } ?? t.endIndex)]))
                })
                #expect(rateColumns.count == 1, "rates start at columns \(rateColumns)")
            }
        }
        #expect(DisplayWidth.of("東京") == 4 && DisplayWidth.of("e\u{301}") == 1 && DisplayWidth.of("😀") == 2
                && DisplayWidth.of("a\u{200B}b") == 2 && DisplayWidth.of("ＡＢ") == 4)
    }

    /// Issue #34: `evflowctl top --interval 1e10` (or `inf`) trapped converting the seconds to
    /// nanoseconds; `nan` and negative values must be refused as clearly.
    @Test("top --interval 1e10, inf, nan or a negative value is refused by the parser, not a trap")
    func topIntervalOutOfRangeIsRefused() throws {
        for bad in ["1e10", "inf", "nan", "-1", "0.01", "86401", ""] {
            do {
                _ = try Top.parse(["--interval", bad])
                Issue.record("--interval '\(bad)' was accepted")
            } catch {
                let text = Top.message(for: error)
                #expect(text.contains("0.1 to 86400"), "\(bad): \(text)")
            }
        }
        let parsed = try Top.parse(["--interval", "0.5"])
        #expect(parsed.interval == 500_000_000)
        #expect(try Top.parse([]).interval == 1_000_000_000)
    }
}
