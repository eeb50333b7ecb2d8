import InputModel
import Pipeline

/// The analysis behind `evflowctl analyze RECORDING`: how much each key and button of a
/// recording chatters, and which debounce settings remove it — proven by running the real
/// filter (`NoiseFilter`, `KeyDebounce`) over the recording.
///
/// Works on the raw events of complete frames: events after a device's last `SYN_REPORT`
/// are ignored, as a replay ignores them. Per `EV_KEY` code it counts presses (1), releases
/// (0) and repeats (2), and histograms (5 ms buckets below 100 ms) the release→press gaps and
/// press→release holds. Edges are paired by order, not by time, so two edges with the same
/// timestamp make an interval of 0.
///
/// Real presses: a press is a real one when it is the code's first, or comes at least
/// `bounceCeiling` (30 ms) after the previous release — faster than a person re-presses; a
/// press sooner than that is contact bounce or a spurious release. The filter's output is
/// checked against them: a real press with no delivered press in its span (up to the next
/// real press) is *lost*; each delivered press beyond the first in a span is a *remaining
/// bounce* (an extra click). Both must be 0.
///
/// The suggestion (`search`): the default setting if it already gives 0 and 0; otherwise the
/// smallest window from 5 to 30 ms (whole ms) that does, with the spurious mode `auto`, else
/// `always`; if none does, the setting with the fewest lost presses, then remaining bounces.
/// The report gives both outcomes and the closest real double-click (the shortest
/// release→press gap of a real press), which a window must stay below.
///
/// Touch and tool contacts (`BTN_TOUCH`, `BTN_TOOL_*`) are reported but not filtered, so they
/// get no suggestion. Pipeline does not depend on the Recording module, so the input is a
/// list of devices with their events; with a `Recording`:
/// `ChatterAnalysis.analyze(recording.devices.map { ($0.info, $0.events) })`.
public enum ChatterAnalysis {
    /// Intervals up to this length are reported (ns).
    public static let threshold: Int64 = 100_000_000
    /// Histogram bucket width (ns).
    public static let bucketWidth: Int64 = 5_000_000
    /// A press sooner than this after a release is not a real press (ns).
    public static let bounceCeiling: Int64 = 30_000_000
    /// The window search: from this (ns) ...
    public static let windowFloor: Int64 = 5_000_000
    /// ... to this (ns), in whole milliseconds.
    public static let windowCeiling: Int64 = 30_000_000

    /// Analyses the `EV_KEY` events of each device (events in time order, with their `SYN_REPORT`s).
    public static func analyze(_ devices: [(info: DeviceInfo, events: [InputEvent])],
                               config: FilterConfig = FilterConfig()) -> ChatterReport {
        var codes: [ChatterReport.CodeReport] = []
        for (info, events) in devices {
            let frames = completeFrames(events)
            var perCode: [UInt16: Tracker] = [:]
            var keyFrames: [UInt16: [InputFrame]] = [:]
            for frame in frames {
                for e in frame.events where e.type == EventType.key {
                    perCode[e.code, default: Tracker()].add(e)
                    keyFrames[e.code, default: []].append(InputFrame(time: frame.time, events: [e]))
                }
            }
            let defaults = config.settings(for: info)
            for code in perCode.keys.sorted() {
                codes.append(perCode[code]!.report(device: info, code: code, frames: keyFrames[code] ?? [],
                                                   defaultFilter: defaults.keys[code] ?? .passthrough))
            }
        }
        return ChatterReport(codes: codes)
    }

    /// The frames a replay delivers (`FrameAssembler`'s grouping, the live reader's); events
    /// after the last frame are dropped.
    public static func completeFrames(_ events: [InputEvent]) -> [InputFrame] {
        FrameAssembler.frames(of: events).frames
    }

    /// What one setting does to one code's frames.
    public struct Outcome: Hashable, Sendable {
        /// Real presses in the input.
        public var realPresses = 0
        /// Presses delivered.
        public var deliveredPresses = 0
        /// Delivered presses beyond one per real press (bounce that got through).
        public var remainingBounces = 0
        /// Real presses with no delivered press.
        public var lostPresses = 0
        /// The spurious-release method turned on by itself.
        public var spuriousTurnedOn = false
        /// An outcome with these counts.
        public init(realPresses: Int = 0, deliveredPresses: Int = 0, remainingBounces: Int = 0, lostPresses: Int = 0,
                    spuriousTurnedOn: Bool = false) {
            self.realPresses = realPresses
            self.deliveredPresses = deliveredPresses
            self.remainingBounces = remainingBounces
            self.lostPresses = lostPresses
            self.spuriousTurnedOn = spuriousTurnedOn
        }

        /// No bounce left and no press lost.
        public var isClean: Bool { remainingBounces == 0 && lostPresses == 0 }
    }

    /// Runs `filter` over the frames of one code (the real `NoiseFilter`, in event time, held
    /// values delivered at the end) and checks the output against the real presses.
    public static func evaluate(code: UInt16, frames: [InputFrame], filter: CodeFilter) -> Outcome {
        let (output, spuriousTurnedOn) = run(code: code, frames: frames, filter: filter)
        var outcome = Outcome()
        outcome.spuriousTurnedOn = spuriousTurnedOn
        let starts = realPressTimes(frames.flatMap(\.events).filter { $0.type == EventType.key && $0.code == code })
        outcome.realPresses = starts.count
        var perSpan = [Int](repeating: 0, count: starts.count)
        for f in output {
            for e in f.events where e.type == EventType.key && e.code == code && e.value == 1 {
                outcome.deliveredPresses += 1
                // The span of the last real press at or before the delivered one.
                var lo = 0, hi = starts.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if starts[mid] <= e.time { lo = mid + 1 } else { hi = mid }
                }
                if lo == 0 { outcome.remainingBounces += 1 } else { perSpan[lo - 1] += 1 }
            }
        }
        for n in perSpan {
            if n == 0 { outcome.lostPresses += 1 } else { outcome.remainingBounces += n - 1 }
        }
        return outcome
    }

    /// What `filter` delivers of one code's frames: the real `NoiseFilter` in event time,
    /// held values delivered at the end (the frames `evaluate` judges; the HTML report's timeline).
    public static func filtered(code: UInt16, frames: [InputFrame], filter: CodeFilter) -> [InputFrame] {
        run(code: code, frames: frames, filter: filter).output
    }

    private static func run(code: UInt16, frames: [InputFrame], filter: CodeFilter)
        -> (output: [InputFrame], spuriousTurnedOn: Bool) {
        var settings = DeviceFilterSettings()
        settings.keys[code] = filter
        var noise = NoiseFilter(settings: settings)
        var output: [InputFrame] = []
        for frame in frames {
            while let due = noise.nextDeadline, due <= frame.time {
                if let f = noise.fire(at: due) { output.append(f) }
            }
            if let f = noise.process(frame) { output.append(f) }
        }
        while let due = noise.nextDeadline, let f = noise.fire(at: due) { output.append(f) }
        return (output, !noise.spuriousTurnedOn.isEmpty)
    }

    /// Every release→press gap and press→release hold (ns, any length) of one code's events,
    /// paired as the report pairs them (its histograms keep only those under 100 ms).
    public static func intervals(_ events: [InputEvent]) -> (gaps: [Int64], holds: [Int64]) {
        var tracker = Tracker()
        for e in events { tracker.add(e) }
        return (tracker.gaps, tracker.holds)
    }

    /// Times of the real presses of one code's events (see the type's documentation).
    static func realPressTimes(_ events: [InputEvent]) -> [Int64] {
        var starts: [Int64] = []
        var down = false
        var lastRelease: Int64?
        for e in events {
            if e.value == 1 && !down {
                if lastRelease.map({ e.time - $0 >= bounceCeiling }) ?? true { starts.append(e.time) }
                down = true
            } else if e.value == 0 && down {
                lastRelease = e.time
                down = false
            } else if e.value == 0 && lastRelease == nil {
                lastRelease = e.time   // a release first: the key was down before the recording
            }
        }
        return starts
    }

    /// The settings tried, in order of preference, and the one chosen.
    public static func search(code: UInt16, frames: [InputFrame], defaultFilter: CodeFilter)
        -> (filter: CodeFilter, outcome: Outcome, defaultOutcome: Outcome) {
        let defaultOutcome = evaluate(code: code, frames: frames, filter: defaultFilter)
        if defaultOutcome.isClean { return (defaultFilter, defaultOutcome, defaultOutcome) }
        var spuriousWindow: Int64 = 12_000_000
        if case .chatter(_, _, let s) = defaultFilter, s > 0 { spuriousWindow = s }
        var best: (filter: CodeFilter, outcome: Outcome)?
        for mode in [SpuriousMode.auto, .always] {
            var w = windowFloor
            while w <= windowCeiling {
                let filter = CodeFilter.chatter(window: w, spurious: mode, spuriousWindow: spuriousWindow)
                let outcome = evaluate(code: code, frames: frames, filter: filter)
                if outcome.isClean { return (filter, outcome, defaultOutcome) }
                if best == nil || (outcome.lostPresses, outcome.remainingBounces)
                    < (best!.outcome.lostPresses, best!.outcome.remainingBounces) {
                    best = (filter, outcome)
                }
                w += 1_000_000
            }
        }
        return (best!.filter, best!.outcome, defaultOutcome)
    }

    /// Per-code accumulation.
    struct Tracker {
        var presses = 0, releases = 0, repeats = 0
        var lastPress: Int64?
        var lastRelease: Int64?
        var down: Bool?
        var gaps: [Int64] = []    // release→press, all lengths
        var holds: [Int64] = []   // press→release, all lengths

        mutating func add(_ e: InputEvent) {
            switch e.value {
            case 1:
                presses += 1
                if down == false, let r = lastRelease { gaps.append(e.time - r) }
                lastPress = e.time
                down = true
            case 0:
                releases += 1
                if down == true, let p = lastPress { holds.append(e.time - p) }
                lastRelease = e.time
                down = false
            default:
                repeats += 1
            }
        }

        func report(device: DeviceInfo, code: UInt16, frames: [InputFrame], defaultFilter: CodeFilter)
            -> ChatterReport.CodeReport {
            let isTouch = (0x140...0x14f).contains(code)
            var report = ChatterReport.CodeReport(
                deviceID: device.id.rawValue, deviceName: device.name, vendor: device.inputID.vendor,
                product: device.inputID.product,
                code: EventNames.codeText(type: EventType.key, code: code), codeNumber: code,
                presses: presses, releases: releases, repeats: repeats,
                gaps: ChatterReport.Histogram(gaps), holds: ChatterReport.Histogram(holds),
                shortestGap: gaps.min(), shortestHold: holds.min(),
                suggestedWindow: nil, suggestedSpurious: nil, suggestion: nil, withDefault: nil,
                closestDoubleClick: nil,
                reasoning: "touch/tool contact: reports contact, not a mechanical switch; not filtered")
            let events = frames.flatMap(\.events)
            var closest: Int64?
            var lastRelease: Int64?
            var down = false
            for e in events {
                if e.value == 1 && !down, let r = lastRelease, e.time - r >= ChatterAnalysis.bounceCeiling {
                    closest = min(closest ?? .max, e.time - r)
                }
                if e.value == 1 { down = true } else if e.value == 0 { down = false; lastRelease = e.time }
            }
            report.closestDoubleClick = closest
            guard !isTouch else { return report }
            let found = ChatterAnalysis.search(code: code, frames: frames, defaultFilter: defaultFilter)
            report.defaultFilter = defaultFilter
            report.suggestedFilter = found.filter
            report.withDefault = found.defaultOutcome
            report.suggestion = found.outcome
            if case .chatter(let w, let mode, _) = found.filter {
                report.suggestedWindow = w
                report.suggestedSpurious = mode
            }
            let filterText = report.suggestedWindow.map { "window \(ChatterAnalysis.ms($0)), spurious \(report.suggestedSpurious!.rawValue)" }
                ?? "no filter"
            var why: String
            if found.filter == defaultFilter {
                why = "the default (\(filterText)) leaves no bounce and loses no press"
            } else if found.outcome.isClean {
                why = "the default leaves \(found.defaultOutcome.remainingBounces) bounce(s) and loses "
                    + "\(found.defaultOutcome.lostPresses) press(es); \(filterText) is the smallest setting that leaves none"
            } else {
                why = "no window from \(ChatterAnalysis.ms(ChatterAnalysis.windowFloor)) to \(ChatterAnalysis.ms(ChatterAnalysis.windowCeiling)) is clean; "
                    + "\(filterText) comes closest"
            }
            if found.outcome.spuriousTurnedOn && report.suggestedSpurious == .auto {
                why += " (the spurious-release method turns on by itself on this recording)"
            }
            if let closest { why += "; closest real double-click: \(ChatterAnalysis.ms(closest)) between release and press" }
            report.reasoning = why
            return report
        }
    }

    /// A duration for people: `12ms`, `12.3ms` (whole milliseconds, else tenths).
    public static func ms(_ ns: Int64) -> String {
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        let tenths = (ns + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)ms"
    }
}

/// The result of `ChatterAnalysis.analyze`: one entry per key/button code per device.
public struct ChatterReport: Hashable, Sendable {
    /// Counts of intervals per bucket: bucket i holds intervals in [i·5 ms, (i+1)·5 ms), below 100 ms.
    public struct Histogram: Hashable, Sendable {
        /// 20 buckets of 5 ms.
        public var counts: [Int]

        /// Buckets `intervals` (ns); those ≥ 100 ms (and negative ones) are not counted.
        public init(_ intervals: [Int64]) {
            counts = [Int](repeating: 0, count: Int(ChatterAnalysis.threshold / ChatterAnalysis.bucketWidth))
            for d in intervals where d >= 0 && d < ChatterAnalysis.threshold {
                counts[Int(d / ChatterAnalysis.bucketWidth)] += 1
            }
        }

        /// Intervals counted.
        public var total: Int { counts.reduce(0, +) }
    }

    /// One key or button of one device.
    public struct CodeReport: Hashable, Sendable {
        /// Device id.
        public var deviceID: String
        /// Device name.
        public var deviceName: String
        /// Vendor and product (for `--config-out`).
        public var vendor: UInt16, product: UInt16
        /// Code name (`KEY_A`, `BTN_LEFT`).
        public var code: String
        /// Code number.
        public var codeNumber: UInt16
        /// Events with value 1, 0 and 2.
        public var presses: Int, releases: Int, repeats: Int
        /// Release→press gaps under 100 ms.
        public var gaps: Histogram
        /// Press→release durations under 100 ms.
        public var holds: Histogram
        /// Shortest release→press gap and press→release duration (ns), any length.
        public var shortestGap: Int64?, shortestHold: Int64?
        /// Suggested debounce window (ns); nil for touch/tool contacts.
        public var suggestedWindow: Int64?
        /// Suggested spurious-release mode; nil for touch/tool contacts.
        public var suggestedSpurious: SpuriousMode?
        /// What the suggestion and the default do to this recording (nil for touch/tool contacts).
        public var suggestion: ChatterAnalysis.Outcome?, withDefault: ChatterAnalysis.Outcome?
        /// The shortest release→press gap before a real press (ns).
        public var closestDoubleClick: Int64?
        /// The default setting and the suggested one, as filters (nil for touch/tool contacts).
        public var defaultFilter: CodeFilter? = nil, suggestedFilter: CodeFilter? = nil
        /// Why this window.
        public var reasoning: String
    }

    /// Every key/button seen, by device (in input order), then code number.
    public var codes: [CodeReport]
}
