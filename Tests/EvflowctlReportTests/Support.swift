import Foundation
import InputModel
import NoiseAnalysis
import Pipeline

/// One millisecond in nanoseconds.
let ms: Int64 = 1_000_000

/// A code by name (`KEY_A`).
func code(_ name: String) -> UInt16 {
    EventNames.code(named: name, type: EventType.key) ?? EventNames.code(named: name, type: EventType.abs)!
}

/// `Tests/Fixtures`, found from this file's location.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

/// The synthetic keyboard-and-mouse the PipelineTests' ChatterAnalysis suite pins the numbers
/// of; here the renderers are checked against them.
enum Synthetic {
    static let info = DeviceInfo(name: "Synthetic", inputID: InputID(bustype: 3, vendor: 0x1234, product: 0x5678, version: 1),
                                 classes: [.keyboard, .mouse],
                                 capabilities: [EventType.key: Set(["KEY_A", "KEY_B", "KEY_C", "BTN_LEFT", "BTN_TOUCH"].map(code))])

    /// Key events from `(value, ms)` pairs, each followed by a SYN_REPORT.
    static func events(_ name: String, _ items: [(Int32, Int64)]) -> [InputEvent] {
        items.flatMap {
            [InputEvent(time: $0.1 * ms, type: EventType.key, code: code(name), value: $0.0),
             InputEvent(time: $0.1 * ms, type: EventType.syn, code: SynCode.report, value: 0)]
        }
    }

    /// KEY_A with one bounce, KEY_B clean, BTN_LEFT bouncing 1–12 ms after each release,
    /// BTN_TOUCH (not filtered), KEY_C re-closing 20 ms after each release (beyond the default).
    static func events() -> [InputEvent] {
        var events = events("KEY_A", [(1, 0), (0, 3), (1, 5), (0, 60), (1, 130), (2, 400), (2, 433), (0, 450)])
        events += Self.events("KEY_B", [(1, 1000), (0, 1100)])
        var button: [(Int32, Int64)] = []
        for i in 0..<100 {
            let t = Int64(2000 + i * 1000), d = Int64(i % 12 + 1)
            button += [(1, t), (0, t + 80), (1, t + 80 + d), (0, t + 81 + d)]
        }
        events += Self.events("BTN_LEFT", button)
        events += Self.events("BTN_TOUCH", [(1, 5000), (0, 5003), (1, 5006), (0, 5009)])
        events += Self.events("KEY_C", (0..<5).flatMap { i -> [(Int32, Int64)] in
            let t = Int64(200_000 + i * 1000)
            return [(1, t), (0, t + 100), (1, t + 120), (0, t + 122)]
        })
        return events.sorted { $0.time < $1.time }
    }

    static func report() -> ChatterReport { ChatterAnalysis.analyze([(info: info, events: events())]) }
}
