import DeviceStreams
import InputModel
@testable import NoiseAnalysis
@testable import Pipeline
import Reactive
import Recording
import Testing

/// Issue #34: times near 2⁶³ ns (a recording's, before the readers' limit; a built one's)
/// trapped where the filters and the analyses add to them, and values 1e-308 apart sent the
/// sensor analysis into an endless loop. Each case here trapped or hung before its fix.
@Suite("issue #34: times near 2⁶³ ns and tiny values")
struct TimeOverflowTests {
    static let late = Int64.max - 1_000

    static func key(_ time: Int64, _ value: Int32) -> [InputEvent] {
        [InputEvent(time: time, type: EventType.key, code: 30, value: value), InputEvent(time: time, type: 0, code: 0, value: 0)]
    }

    @Test("KeyDebounce: a press 1 µs before Int64.max opens a window that ends at Int64.max (it trapped in edge + window)")
    func keyDebounceDeadlineSaturates() {
        var debounce = KeyDebounce(window: 25_000_000, spuriousWindow: 12_000_000, mode: .always)
        #expect(debounce.on(.press, at: Self.late).emit == 1)
        #expect(debounce.deadline == .max)
        _ = debounce.on(.timeout, at: .max)
        #expect(debounce.state == .down)
        _ = debounce.on(.release, at: Self.late + 1)   // held for the spurious window: saturates too
        #expect(debounce.deadline == .max)
        let out = debounce.on(.timeout, at: .max)
        #expect(out.emit == 0 && out.time == .max)
        var initial = KeyDebounce(window: 25_000_000, spuriousWindow: 0, mode: .off)
        #expect(initial.on(.release, at: Self.late).emit == 0)   // afterRelease's edge + window
        #expect(initial.deadline == .max)
    }

    @Test("evflowctl analyze: a key pressed at 0 and released at 9223372036.854 s is analysed, not a trap")
    func chatterAnalysisNearTheEndOfTime() {
        let info = DeviceInfo(name: "k", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              capabilities: [EventType.key: [30]])
        let events = Self.key(0, 1) + Self.key(9_223_372_036_854_000_000, 0) + Self.key(Self.late, 1) + Self.key(Self.late + 10, 0)
        let report = ChatterAnalysis.analyze([(info, events)])
        #expect(report.codes.first?.presses == 2)
    }

    @Test("NoiseFilter: an axis rate limit at a frame near Int64.max holds its window to Int64.max (it trapped in now + interval)")
    func rateLimitWindowSaturates() {
        var settings = DeviceFilterSettings()
        settings.absolute[0] = .absolute(hysteresis: 0, minInterval: 10_000_000)
        var filter = NoiseFilter(settings: settings)
        let x = { (t: Int64, v: Int32) in InputFrame(time: t, events: [InputEvent(time: t, type: EventType.abs, code: 0, value: v)]) }
        #expect(filter.process(x(Self.late, 5)) != nil)
        _ = filter.process(x(Self.late + 1, 6))   // inside the window: held
        if let deadline = filter.nextDeadline {
            #expect(deadline == .max)
            _ = filter.fire(at: deadline)
        }
    }

    @Test("NoiseFilter: a switch debounced at a frame near Int64.max is held to Int64.max (it trapped in now + dueTime)")
    func switchDebounceSaturates() {
        var settings = DeviceFilterSettings()
        settings.switches[0] = .debounce(window: 20_000_000)
        var filter = NoiseFilter(settings: settings)
        let lid = InputFrame(time: Self.late, events: [InputEvent(time: Self.late, type: EventType.sw, code: 0, value: 1)])
        _ = filter.process(lid)
        #expect(filter.nextDeadline == .max)
        _ = filter.fire(at: .max)
    }

    @Test("sensor filters: a held zero or a settling level near Int64.max is due at Int64.max, not wrapped into the past")
    func sensorDeadlinesSaturate() {
        var gate = OutlierGate(settings: OutlierSettings(phantomZero: true, confirmTimeout: 1_000_000_000))
        _ = gate.on(TimedValue(100, at: Self.late - 10))
        _ = gate.on(TimedValue(0, at: Self.late))
        #expect(gate.deadline == .max)
    }

    @Test("evflowctl analyze --axes: an axis at rest near Int64.max is sliced, not a trap (start + slice) nor an endless slice")
    func axisAnalysisNearTheEndOfTime() {
        let info = DeviceInfo(name: "pad", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              capabilities: [EventType.abs: [0]], absInfo: [0: AbsInfo(minimum: 0, maximum: 1000, fuzz: 0)])
        var events: [InputEvent] = []
        for i in 0..<40 as Range<Int64> {
            let t = Int64.max - 40 + i
            events += [InputEvent(time: t, type: EventType.abs, code: 0, value: Int32(500 + i % 2)), InputEvent(time: t, type: 0, code: 0, value: 0)]
        }
        let reports = AxisNoiseAnalysis.analyze([(info, events)])
        #expect(reports.count == 1)
        #expect(reports.first?.events == 40)
    }

    @Test("SensorNoiseAnalysis.roundUp of 1e-308 and other extremes ends (the scale grew to +inf and it looped for ever)")
    func roundUpEnds() {
        for x in [1e-308, 4e-308, 5e-324, Double.leastNormalMagnitude, 1e308, Double.greatestFiniteMagnitude, 0.123, 12_345] {
            let r = SensorNoiseAnalysis.roundUp(x)
            #expect(r.isFinite && r >= x, "\(x) → \(r)")
        }
        #expect(SensorNoiseAnalysis.roundUp(0.1234) == 0.13)
        #expect(SensorNoiseAnalysis.roundUp(12_345) == 13_000)
    }

    @Test("evflowctl analyze FILE.sensors: samples that differ by 1e-308 give a report, not 100 % CPU for ever")
    func sensorAnalysisOfTinyDifferences() {
        let info = SensorInfo(id: DeviceID(rawValue: "s"), name: "s", sysname: "iio:device0",
                              channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)
        let tiny = (0..<20).map { i in SensorSample(time: Int64(i) * 100_000_000, values: [i % 2 == 0 ? 0 : 1e-308]) }
        let subnormal = (0..<20).map { i in SensorSample(time: Int64(i) * 100_000_000, values: [Double(i % 3) * 5e-324]) }
        let reports = SensorNoiseAnalysis.analyze([(info, tiny), (info, subnormal)])
        #expect(reports.count == 2)
        #expect(reports.allSatisfy { $0.suggested.hysteresis.isFinite })
    }
}
