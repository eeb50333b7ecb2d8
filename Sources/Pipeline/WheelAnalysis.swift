import InputModel

/// The wheel part of `evflowctl analyze RECORDING`: the scroll reversals of each wheel axis of
/// a recording, its stray ticks, and the wheel filter window that removes them — proven by
/// running the real filter (`NoiseFilter` with a `wheel` setting, `WheelFilter`) over the
/// recording.
///
/// A *tick* is one frame's motion on the axis (`REL_WHEEL_HI_RES` when the device declares
/// it, else `REL_WHEEL`; the horizontal pair alike). A *reversal* is a tick whose sign differs
/// from the tick before it. A *stray* is a lone reversed tick inside a scroll: the ticks just
/// before and after it go the other way, each less than `strayCeiling` (200 ms) from it —
/// a person does not flick the wheel back for one tick and on again that fast; a worn
/// encoder does. Every other tick is *real*.
///
/// A window's outcome: strays the filter still delivers (*remaining*) and real ticks it drops
/// (*lost*). The suggestion: off when there is no stray; else the smallest window from 20 to
/// 250 ms (10 ms steps) with 0 remaining and 0 lost; if none, the one with the fewest lost,
/// then remaining.
public enum WheelAnalysis {
    /// A lone reversed tick closer than this to its neighbours is a stray (ns).
    public static let strayCeiling: Int64 = 200_000_000
    /// The window search: from this (ns) ...
    public static let windowFloor: Int64 = 20_000_000
    /// ... to this (ns), in `windowStep`s.
    public static let windowCeiling: Int64 = 250_000_000
    /// The search's step (ns).
    public static let windowStep: Int64 = 10_000_000

    /// One tick of an axis.
    public struct Tick: Hashable, Sendable, Codable {
        /// Its frame's time (ns).
        public var time: Int64
        /// Its motion (high-resolution units on a high-resolution axis).
        public var motion: Int32
    }

    /// What a window does to an axis' ticks.
    public struct Outcome: Hashable, Sendable, Codable {
        /// The window (ns).
        public var window: Int64
        /// Strays still delivered.
        public var remainingStrays = 0
        /// Real ticks dropped.
        public var lostTicks = 0
        /// Nothing stray left and nothing real lost.
        public var isClean: Bool { remainingStrays == 0 && lostTicks == 0 }
    }

    /// One wheel axis of one device.
    public struct AxisReport: Hashable, Sendable, Codable {
        /// The device's id (`DeviceID`), name, vendor and product.
        public var deviceID: String
        public var deviceName: String
        public var vendor: UInt16
        public var product: UInt16
        /// `REL_WHEEL` or `REL_HWHEEL`.
        public var code: UInt16
        /// Whether the ticks are high-resolution motion.
        public var hiRes: Bool
        /// Every tick, in order.
        public var ticks: [Tick]
        /// Indices (in `ticks`) of the reversals.
        public var reversals: [Int]
        /// Indices (in `ticks`) of the strays.
        public var strays: [Int]
        /// Per stray, the time since the tick before it (ns): a window must be longer.
        public var strayGaps: [Int64]
        /// The suggested window (0: no wheel filter needed) and its outcome.
        public var suggestion: Outcome
        /// Whether the filter is worth turning on: strays were found and the suggestion
        /// removes them without losing a real tick.
        public var recommended: Bool { !strays.isEmpty && suggestion.isClean }
        /// The code's name (`REL_WHEEL`).
        public var codeName: String { EventNames.codeText(type: EventType.rel, code: code) }
    }

    /// Analyses every wheel axis of each device (events in time order, with their `SYN_REPORT`s).
    public static func analyze(_ devices: [(info: DeviceInfo, events: [InputEvent])]) -> [AxisReport] {
        var reports: [AxisReport] = []
        for (info, events) in devices {
            let rel = info.capabilities[EventType.rel] ?? []
            let frames = ChatterAnalysis.completeFrames(events)
            for lo in [UInt16(8), UInt16(6)] where rel.contains(lo) {
                let hi = NoiseFilter.hiResCode(lo), hiRes = rel.contains(hi)
                let axisFrames = frames.compactMap { f -> InputFrame? in
                    let e = f.events.filter { $0.type == EventType.rel && ($0.code == lo || (hiRes && $0.code == hi)) }
                    return e.isEmpty ? nil : InputFrame(time: f.time, events: e)
                }
                let ticks = self.ticks(axisFrames, lo: lo, hi: hi, hiRes: hiRes)
                guard !ticks.isEmpty else { continue }
                let (reversals, strays) = classify(ticks)
                var report = AxisReport(deviceID: info.id.rawValue, deviceName: info.name, vendor: info.inputID.vendor,
                                        product: info.inputID.product, code: lo, hiRes: hiRes, ticks: ticks, reversals: reversals,
                                        strays: strays, strayGaps: strays.map { ticks[$0].time - ticks[$0 - 1].time },
                                        suggestion: Outcome(window: 0))
                report.suggestion = search(report, frames: axisFrames)
                reports.append(report)
            }
        }
        return reports
    }

    static func ticks(_ frames: [InputFrame], lo: UInt16, hi: UInt16, hiRes: Bool) -> [Tick] {
        frames.compactMap { f in
            var l: Int32 = 0, h: Int32 = 0, hasHi = false
            for e in f.events {
                if e.code == lo { l &+= e.value } else if e.code == hi { h &+= e.value; hasHi = true }
            }
            let motion = hiRes ? (hasHi ? h : l &* 120) : l
            return motion == 0 ? nil : Tick(time: f.time, motion: motion)
        }
    }

    /// The reversals and the strays among `ticks` (see the type's documentation).
    static func classify(_ ticks: [Tick]) -> (reversals: [Int], strays: [Int]) {
        var reversals: [Int] = [], strays: [Int] = []
        for i in ticks.indices.dropFirst() where (ticks[i].motion > 0) != (ticks[i - 1].motion > 0) {
            reversals.append(i)
            if i + 1 < ticks.count, (ticks[i + 1].motion > 0) == (ticks[i - 1].motion > 0),
               ticks[i].time - ticks[i - 1].time < strayCeiling, ticks[i + 1].time - ticks[i].time < strayCeiling {
                strays.append(i)
            }
        }
        return (reversals, strays)
    }

    /// Which ticks `window` delivers: the real `NoiseFilter` over the axis' frames in event
    /// time, deadlines fired before each later frame and at the end.
    public static func delivered(_ report: AxisReport, frames: [InputFrame], window: Int64) -> [Bool] {
        var settings = DeviceFilterSettings()
        settings.wheel[report.code] = WheelSetting(window: window, hiRes: report.hiRes)
        var noise = NoiseFilter(settings: settings)
        let ticks = report.ticks
        var out = [Bool](repeating: false, count: ticks.count)
        var held: Int? = nil
        var i = 0
        for frame in frames {
            while let due = noise.nextDeadline, due <= frame.time { _ = noise.fire(at: due) }
            if held != nil && !noise.hasHeldValues { held = nil }   // dropped at its window's end
            let result = noise.process(frame)
            guard i < ticks.count, ticks[i].time == frame.time else { continue }   // a frame without motion
            let motion = result.map { self.ticks([$0], lo: report.code, hi: NoiseFilter.hiResCode(report.code), hiRes: report.hiRes) }
            if let m = motion?.first?.motion {
                out[i] = true
                if let h = held, abs(Int64(m)) > abs(Int64(ticks[i].motion)) { out[h] = true }   // released with this one
                held = nil
            } else if noise.hasHeldValues {
                held = i
            }
            i += 1
        }
        return out
    }

    /// The outcome of `window` on an axis.
    public static func evaluate(_ report: AxisReport, frames: [InputFrame], window: Int64) -> Outcome {
        let delivered = self.delivered(report, frames: frames, window: window)
        let strays = Set(report.strays)
        var outcome = Outcome(window: window)
        for (i, d) in delivered.enumerated() {
            if strays.contains(i) {
                if d { outcome.remainingStrays += 1 }
            } else if !d {
                outcome.lostTicks += 1
            }
        }
        return outcome
    }

    static func search(_ report: AxisReport, frames: [InputFrame]) -> Outcome {
        guard !report.strays.isEmpty else { return Outcome(window: 0) }
        var best: Outcome?
        var w = windowFloor
        while w <= windowCeiling {
            let outcome = evaluate(report, frames: frames, window: w)
            if outcome.isClean { return outcome }
            if best == nil || (outcome.lostTicks, outcome.remainingStrays) < (best!.lostTicks, best!.remainingStrays) {
                best = outcome
            }
            w += windowStep
        }
        return best!
    }
}
