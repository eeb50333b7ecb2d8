import Foundation
import Testing
import InputModel
import Pipeline
import Reactive
import ReactiveTesting

/// Test fixtures, found from this source file's location (no SwiftPM resources needed).
enum Fixtures {
    /// `Tests/Fixtures`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // PipelineTests
        .deletingLastPathComponent()   // Tests
        .appendingPathComponent("Fixtures")

    /// The repository root (for `docs/`).
    static let repositoryRoot = root.deletingLastPathComponent().deletingLastPathComponent()

    /// Every shipped real recording (evemu events/evemu files and libinput YAML), sorted by
    /// path relative to `recordings/`. `.desc` files are descriptions, not recordings.
    static func recordings() -> [String] {
        let base = root.appendingPathComponent("recordings")
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var found: [String] = []
        for case let path as String in walker {
            if path.hasSuffix(".events") || path.hasSuffix(".evemu") || path.hasSuffix(".yml") {
                found.append(path)
            }
        }
        return found.sorted()
    }

    /// A file under `recordings/`.
    static func recording(_ relativePath: String) -> URL {
        root.appendingPathComponent("recordings").appendingPathComponent(relativePath)
    }
}

/// One millisecond in nanoseconds (TestScheduler ticks are 1 ms).
let ms: Int64 = 1_000_000

/// Named codes used by the tests (looked up once, so a typo fails loudly).
enum C {
    static func code(_ name: String) -> UInt16 {
        guard let c = EventNames.code(named: name) else { fatalError("unknown code \(name)") }
        return c.code
    }
    static let KEY_A = code("KEY_A")
    static let KEY_B = code("KEY_B")
    static let BTN_LEFT = code("BTN_LEFT")
    static let KEY_LEFTSHIFT = code("KEY_LEFTSHIFT")
    static let BTN_RIGHT = code("BTN_RIGHT")
    static let BTN_TOUCH = code("BTN_TOUCH")
    static let BTN_TOOL_FINGER = code("BTN_TOOL_FINGER")
    static let SW_LID = code("SW_LID")
    static let ABS_X = code("ABS_X")
    static let ABS_Y = code("ABS_Y")
    static let ABS_MT_SLOT = code("ABS_MT_SLOT")
    static let ABS_MT_POSITION_X = code("ABS_MT_POSITION_X")
    static let ABS_MT_TRACKING_ID = code("ABS_MT_TRACKING_ID")
    static let REL_X = code("REL_X")
    static let REL_Y = code("REL_Y")
    static let REL_WHEEL = code("REL_WHEEL")
    static let REL_HWHEEL = code("REL_HWHEEL")
    static let REL_WHEEL_HI_RES = code("REL_WHEEL_HI_RES")
    static let MSC_SCAN = code("MSC_SCAN")
    static let LED_CAPSL = code("LED_CAPSL")
}

/// An event at `t` ms.
func ev(_ type: UInt16, _ code: UInt16, _ value: Int32, at t: Int64 = 0) -> InputEvent {
    InputEvent(time: t * ms, type: type, code: code, value: value)
}

/// A frame at `t` ms whose events carry the same time.
func frame(_ t: Int64, _ events: [(UInt16, UInt16, Int32)]) -> InputFrame {
    InputFrame(time: t * ms, events: events.map { ev($0.0, $0.1, $0.2, at: t) })
}

/// A one-event frame.
func frame(_ t: Int64, _ type: UInt16, _ code: UInt16, _ value: Int32) -> InputFrame {
    frame(t, [(type, code, value)])
}

/// A frame as text: `@25 KEY_A 0, REL_X 5` (times in ms, fractions kept).
func describe(_ f: InputFrame) -> String {
    let t = f.time % ms == 0 ? "\(f.time / ms)" : "\(Double(f.time) / Double(ms))"
    return "@\(t) " + f.events.map { "\(EventNames.codeText(type: $0.type, code: $0.code)) \($0.value)" }
        .joined(separator: ", ")
}

/// What `filterNoise` delivered in a virtual-time run.
struct FilterRun {
    /// Delivered frames, in order.
    var frames: [InputFrame] = []
    /// Tick of completion or error, if any.
    var stoppedAt: Int?
    /// Counters after the last step.
    var counters = DeviceCounters()

    /// `value@ms` of every delivered event of one code, e.g. `1@0 0@25`.
    func values(_ type: UInt16, _ code: UInt16) -> String {
        frames.flatMap { f in
            f.events.filter { $0.type == type && $0.code == code }.map { "\($0.value)@\(f.time / ms)" }
        }.joined(separator: " ")
    }

    /// Every frame as text.
    var lines: [String] { frames.map(describe) }
}

/// Feeds `input` (frames at their times in ms) through `filterNoise(settings)` on a fresh
/// TestScheduler. The source completes at `completeAt` (removal), the subscription is
/// disposed at `disposeAt`; settings updates are sent at their ticks. The scheduler then
/// runs until nothing is left. Checks that the live-resource count is back where it was.
func runFilter(_ settings: DeviceFilterSettings, _ input: [InputFrame], completeAt: Int? = nil,
               disposeAt: Int? = nil, updates: [(Int, DeviceFilterSettings)] = []) -> FilterRun {
    let before = LiveResources.owned
    let run = runFilterBody(settings, input, completeAt: completeAt, disposeAt: disposeAt, updates: updates)
    LiveResources.expectOwned(before, "filterNoise left live resources behind")
    return run
}

private func runFilterBody(_ settings: DeviceFilterSettings, _ input: [InputFrame], completeAt: Int?,
                           disposeAt: Int?, updates: [(Int, DeviceFilterSettings)]) -> FilterRun {
    let scheduler = TestScheduler()
    var events = input.map { Recorded.next(Int($0.time / ms), $0) }
    if let completeAt { events.append(.completed(completeAt)) }
    let source = scheduler.createHotObservable(events)
    let settingsSource = scheduler.createHotObservable(updates.map { Recorded.next($0.0, $0.1) })
    var run = FilterRun()
    let subscription = source.asObservable()
        .filterNoise(settings, scheduler: scheduler, settingsUpdates: settingsSource.asObservable(),
                     onUpdate: { _, counters in run.counters = counters })
        .subscribe(onNext: { run.frames.append($0) },
                   onError: { _ in run.stoppedAt = scheduler.clockTicks },
                   onCompleted: { run.stoppedAt = scheduler.clockTicks })
    if let disposeAt { scheduler.scheduleAt(disposeAt) { subscription.dispose() } }
    scheduler.start()
    subscription.dispose()
    return run
}

/// Settings with one filter for one code.
func settings(_ type: UInt16, _ code: UInt16, _ filter: CodeFilter) -> DeviceFilterSettings {
    var s = DeviceFilterSettings()
    switch type {
    case EventType.key: s.keys[code] = filter
    case EventType.sw: s.switches[code] = filter
    case EventType.abs: s.absolute[code] = filter
    case EventType.rel: s.relative[code] = filter
    default: break
    }
    return s
}

/// Frames for one key from `value@ms` text such as `1@0 0@3 1@6`.
func keyFrames(_ text: String, type: UInt16 = EventType.key, code: UInt16 = C.KEY_A) -> [InputFrame] {
    text.split(separator: " ").map { item in
        let parts = item.split(separator: "@")
        return frame(Int64(parts[1])!, type, code, Int32(parts[0])!)
    }
}

/// A device description for configuration and hub tests.
func device(name: String, vendor: UInt16 = 0x1234, product: UInt16 = 0x5678, classes: Set<DeviceClass>,
            capabilities: [UInt16: Set<UInt16>], absInfo: [UInt16: AbsInfo] = [:]) -> DeviceInfo {
    DeviceInfo(name: name, inputID: InputID(bustype: 3, vendor: vendor, product: product, version: 1),
               classes: classes, capabilities: capabilities, absInfo: absInfo)
}

/// SplitMix64: a small seeded generator, so random tests are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    /// A number in `0..<n`.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
