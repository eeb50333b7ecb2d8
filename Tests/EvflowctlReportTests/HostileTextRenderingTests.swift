import EvflowProtocol
import Foundation
import InputModel
import NoiseAnalysis
import Pipeline
import Testing
@testable import evflowctl

/// Issue #34, finding 6: raw ESC/BEL reached the terminal wherever a stranger controls the
/// text and the renderer had not been told to escape that field: another client's WATCH id in
/// `stats`, the device name in `analyze`'s text report, session device ids and sensor
/// ids/sysnames/channel names in `devices`, `state`, `stats`, `latency`, `watch`, names in
/// `analyze FILE.sensors`. Every renderer now builds `TerminalText`, which escapes every field;
/// this runs each of them over messages whose every string field is hostile.
@Suite("evflowctl: no raw control character from a stranger's text reaches the terminal")
struct HostileTextRenderingTests {
    /// A lone combining mark first (it would join the column separator), CSI to clear the
    /// screen, BEL, a C1 CSI, a bidi override, NUL, a line break, DEL.
    static let hostile = "\u{301}x\u{1b}[2J\u{07}\u{9b}31m\u{202e}evil\u{0}\nline\u{7f}"

    /// Whether `text` holds a raw C0 control other than the renderer's own line feed, DEL, a
    /// C1 control, a bidi control, or the hostile text's combining mark (escaped when it
    /// begins a field).
    static func unsafe(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { u in
            (u.value < 0x20 && u != "\n") || (0x7f...0x9f).contains(u.value) || u == "\u{301}"
                || [0x061C, 0x200E, 0x200F, 0x2066, 0x2067, 0x2068, 0x2069].contains(u.value) || (0x202A...0x202E).contains(u.value)
        }
    }

    /// A label value as evflowd's METRICS writes it.
    static func label(_ s: String) -> String {
        VisibleText.escaped(s).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// Every text renderer of evflowctl, over messages whose string fields all hold `s`.
    /// `String(describing:)`, so that the suite reads the renderers' text whatever type they return.
    static func renderings(_ s: String) -> [(String, String)] {
        let id = DeviceID(rawValue: s)
        var device = DeviceInfo(name: s, inputID: InputID(bustype: 3, vendor: 0x1234, product: 0x5678, version: 1), phys: s,
                                uniq: s, devnode: s, classes: [.keyboard, .mouse], properties: [s: s],
                                capabilities: Synthetic.info.capabilities, id: id)
        device.output = DeviceOutputStatus(mode: .virtual, reason: s)
        device.battery = DeviceBattery(percent: 50, status: .discharging, supply: s)
        var grabbed = device
        grabbed.output = DeviceOutputStatus(mode: .virtual, virtualNode: s, grab: .grabbed)
        let sensor = SensorInfo(id: id, name: s, sysname: s, devnode: s, properties: [s: s],
                                channels: [SensorChannel(name: s, quantity: .illuminance), SensorChannel(name: s + "2", quantity: .intensity)],
                                buffered: false)
        let summary = LatencySummary(count: 3, p50: 1_000, p90: 2_000, p99: 3_000, p999: 4_000, max: 5_000)
        var stats = ServerStats(release: s, uptime: 1, now: 1, devices: 1, clients: 2, watchers: 1, liveResources: 0,
                                droppedByFilter: [s: 1], closed: [:],
                                clientList: [ClientStats(client: 1, pid: 2, uid: 3, tag: .string(s), stream: .raw, sent: 4),
                                             ClientStats(client: 2, tag: .integer(7))])
        stats.deviceDropped = [id: [s: 2]]
        stats.deviceOutput = [id: DeviceOutputCounters(framesWritten: 1, writeErrors: 0)]
        stats.spuriousRelease = [id: [s]]
        let latency = LatencyReport(clock: .monotonic, total: [.read: summary, .filtered: summary],
                                    devices: [id: [.read: summary]])
        let frame = InputFrame(time: 5, events: [InputEvent(time: 5, type: EventType.key, code: 30, value: 1)])
        var chatter = ChatterAnalysis.analyze([(info: device, events: Synthetic.events())])
        for i in chatter.codes.indices { chatter.codes[i].reasoning = s }
        let stick = DeviceInfo(name: s, inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1), classes: [.joystick],
                               capabilities: [EventType.abs: [0]], absInfo: [0: AbsInfo(minimum: 0, maximum: 255, fuzz: 4)], id: id)
        var stickEvents: [InputEvent] = []
        for i in 0..<200 {
            let t = Int64(i) * 10_000_000
            stickEvents.append(InputEvent(time: t, type: EventType.abs, code: 0, value: 122 + Int32(i % 13)))
            stickEvents.append(InputEvent(time: t, type: EventType.syn, code: SynCode.report, value: 0))
        }
        let axes = AxisNoiseAnalysis.analyze([(info: stick, events: stickEvents)])
        var samples: [SensorSample] = []
        for i in 0..<50 { samples.append(SensorSample(time: Int64(i) * 100_000_000, values: [100 + Double(i % 3), 7])) }
        let sensorReports = SensorNoiseAnalysis.analyze([(info: sensor, samples: samples)])
        let top = TopSample(time: 1_000_000_000, stats: stats, states: [DeviceStateReport(device: device, keysDown: [30])],
                            latency: latency)
        var out: [(String, String)] = [
            ("devices", "\(Render.devices([device, grabbed]))"),
            ("sensors", "\(Render.sensors([sensor]))"),
            ("state", "\(Render.state(DeviceStateReport(device: device, keysDown: [30], abs: [0: 1], switches: [0: 1], leds: [0: 1])))"),
            ("sensor state", "\(Render.sensorState(SensorStateReport(sensor: sensor, filtered: SensorSample(time: 1, values: [1, 2]), raw: SensorSample(time: 1, values: [1, 2]), orientation: s, live: true)))"),
            ("stats", "\(Render.stats(stats))"),
            ("latency", "\(Render.latency(latency, names: [id: s]))"),
            ("latency --device", "\(Render.latency(latency, names: [id: s], device: id))"),
            ("analyze", "\(chatter.renderText())"),
            ("analyze --axes", "\(AxisNoiseAnalysis.renderText(axes))"),
            ("analyze FILE.sensors", "\(Analyze.sensorText(sensorReports))"),
            ("top", TopScreen.lines(top, previous: top, sort: .name, descending: false, width: 200, height: 50)
                .map { "\($0)" }.joined(separator: "\n")),
            // As evflowd writes a label (VisibleText, then the text format's `\\` and `\"`), shown per line.
            ("metrics", "\(TerminalText(escapingLines: "evflow_x{device=\"\(label(s))\"} 1\nevflow_y 2\n"))"),
        ]
        let stream: [ServerMessage] = [
            .sensor(.added(sensor)), .sensor(.removed(sensor)),
            .sample(SampleMessage(device: id, time: 1, stream: .filtered, values: [s: 1, s + "2": 2], orientation: s)),
            .frame(FrameMessage(device: id, stream: .filtered, frame: frame)),
            .device(.added(device)), .device(.removed(device)), .device(.inaccessible(device, reason: s)),
            .battery(BatteryMessage(device: id, battery: DeviceBattery(level: .low, status: .charging, supply: s))),
        ]
        for m in stream {
            out.append(("watch \(m.messageClass)", "\(Render.streamLine(m, sensors: [:]))"))
            out.append(("watch \(m.messageClass) with units", "\(Render.streamLine(m, sensors: [id: sensor]))"))
        }
        return out
    }

    @Test("issue #34 (6): every renderer over ESC, BEL, CSI, C1, a bidi override and a lone combining mark in every field")
    func noRawControlFromAnyField() {
        let hostile = Self.renderings(Self.hostile), plain = Self.renderings("x")
        #expect(hostile.count == plain.count)
        for ((what, text), (_, benign)) in zip(hostile, plain) {
            #expect("\(what): \(Self.unsafe(text).map { String($0.value, radix: 16) })" == "\(what): []", "\(text.debugDescription)")
            // The stranger's line break is written out: the same lines as with a plain name.
            #expect("\(what): \(text.split(separator: "\n", omittingEmptySubsequences: false).count)"
                    == "\(what): \(benign.split(separator: "\n", omittingEmptySubsequences: false).count)", "\(text.debugDescription)")
            if !what.hasPrefix("top") && what != "metrics" {
                #expect("\(what): \(text.contains(#"\x1b[2J\x07\x9b31m\u202eevil\x00\x0aline\x7f"#))" == "\(what): true",
                        "the hostile text is shown escaped: \(text.debugDescription)")
            }
        }
    }

    @Test("the one rule: C0 (line feed too), DEL, C1 as \\xNN; bidi controls and a leading mark as \\uNNNN; idempotent")
    func theRule() {
        #expect(VisibleText.escaped("a\u{1b}b\nc\u{9b}") == #"a\x1bb\x0ac\x9b"#)
        #expect(VisibleText.escaped("\u{202e}abc\u{2066}") == #"\u202eabc\u2066"#)
        #expect(VisibleText.escaped("\u{301}e\u{301}") == "\\u0301e\u{301}", "a mark inside text stays: it combines with its own letter")
        #expect(VisibleText.escaped("東京 😀 Ü \\ \"") == "東京 😀 Ü \\ \"")
        let once = VisibleText.escaped(Self.hostile)
        #expect(VisibleText.escaped(once) == once)
        let t: TerminalText = "literal\n\(Self.hostile)"
        #expect(t.text == "literal\n" + once)
    }
}
