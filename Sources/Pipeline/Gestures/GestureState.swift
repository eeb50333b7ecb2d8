import InputModel

/// One key's gesture machine (docs/gestures.md, "State × event"): a pure value, changed only
/// by `press`, `release` and `fire`, each returning the gestures it decided. Times are event
/// times; `deadline` is when `fire` is due next (nil: nothing pending).
struct GestureState: Hashable, Sendable {
    enum Phase: Hashable, Sendable {
        /// No press in progress (the value left out of a recogniser's table).
        case idle
        /// The `count`-th press of a sequence is down since `since`.
        case down(count: Int, since: Int64)
        /// The `count`-th press was released at `at`; the window is open.
        case up(count: Int, at: Int64)
        /// A long press (the `count`-th of its sequence) is held; the next `hold` is due at
        /// `next` (nil: no `hold` sent), `repeats` sent so far.
        case held(count: Int, next: Int64?, repeats: Int)
    }

    private(set) var phase = Phase.idle

    /// When `fire` is due: the long time of a press, the window's end after a release, the
    /// next `hold`.
    func deadline(_ s: GestureSettings) -> Int64? {
        switch phase {
        case .idle: nil
        case .down(_, let since): s.timesHeld ? since + s.long : nil
        case .up(_, let at): at + s.multiPress
        case .held(_, let next, _): next
        }
    }

    var isIdle: Bool { phase == .idle }

    /// The key went down at `t`. A press while down (a second press event without a release
    /// between, e.g. after a dropped report) changes nothing.
    mutating func press(at t: Int64, _ s: GestureSettings) -> [(GestureKind, Int, Int64)] {
        switch phase {
        case .idle:
            phase = .down(count: 1, since: t)
            return [(.press, 1, t)]
        case .up(let n, _):
            phase = .down(count: n + 1, since: t)
            return [(.press, n + 1, t)]
        case .down, .held:
            return []
        }
    }

    /// The key came up at `t`. A release without a press the machine saw (the key was down
    /// when the device came or the configuration changed) sends nothing.
    mutating func release(at t: Int64, _ s: GestureSettings) -> [(GestureKind, Int, Int64)] {
        switch phase {
        case .idle, .up:
            return []
        case .down(let n, _):
            if n >= s.maxCount {
                // The highest count gesture sent: final now (no wait for a press that could
                // only start a new sequence); with no count gesture, nothing to wait for.
                phase = .idle
                var out: [(GestureKind, Int, Int64)] = [(.release, n, t)]
                if let g = GestureKind.counted(n), s.kinds.contains(g) { out.append((g, n, t)) }
                return out
            }
            phase = .up(count: n, at: t)
            return [(.release, n, t)]
        case .held(let n, _, _):
            phase = .idle
            return [(.release, n, t)]
        }
    }

    /// The deadline `t` (= `deadline(s)`) has come.
    mutating func fire(at t: Int64, _ s: GestureSettings) -> [(GestureKind, Int, Int64)] {
        switch phase {
        case .idle:
            return []
        case .down(let n, _):
            // Held for the long time: the sequence ends as `long`, never as a count gesture.
            let holds = s.kinds.contains(.hold)
            phase = .held(count: n, next: holds ? t + s.hold : nil, repeats: holds ? 1 : 0)
            var out: [(GestureKind, Int, Int64)] = [(.long, n, t)]
            if holds { out.append((.hold, 1, t)) }
            return out
        case .up(let n, _):
            phase = .idle
            if let g = GestureKind.counted(n), s.kinds.contains(g) { return [(g, n, t)] }
            return []
        case .held(let n, let next, let k):
            guard next != nil else { return [] }
            phase = .held(count: n, next: t + s.hold, repeats: k + 1)
            return [(.hold, k + 1, t)]
        }
    }
}

/// The gesture machines of one device's keys, fed its filtered frames in order: only keys
/// not idle are kept, so the next deadline is a scan of the keys in a sequence.
struct GestureRecognizer: Sendable {
    private(set) var settings: GestureSettings
    private var states: [UInt16: GestureState] = [:]

    init(settings: GestureSettings) { self.settings = settings }

    /// The earliest deadline of any key, nil when none is pending.
    var nextDeadline: Int64? {
        states.values.compactMap { $0.deadline(settings) }.min()
    }

    /// Whether any key is in a sequence.
    var isBusy: Bool { !states.isEmpty }

    /// New settings: when they differ, every key's sequence is dropped (nothing pending
    /// fires; releases of keys down now send nothing), so no gesture mixes two settings.
    mutating func configure(_ new: GestureSettings) {
        guard new != settings else { return }
        settings = new
        states = [:]
    }

    /// The gestures the frame's key events make, in event order.
    mutating func process(_ frame: InputFrame) -> [GestureEvent] {
        if settings.isEmpty { return [] }
        var out: [GestureEvent] = []
        for e in frame.events where e.type == EventType.key && settings.codes.contains(e.code) {
            var state = states[e.code] ?? GestureState()
            let made: [(GestureKind, Int, Int64)]
            switch e.value {
            case 1: made = state.press(at: e.time, settings)
            case 0: made = state.release(at: e.time, settings)
            default: continue   // autorepeat (2): `hold` is the machine's own repeat
            }
            states[e.code] = state.isIdle ? nil : state
            append(made, code: e.code, to: &out)
        }
        return out
    }

    /// Fires every key whose deadline is `t` (keys in code order, so a replay is exact).
    mutating func fire(at t: Int64) -> [GestureEvent] {
        var out: [GestureEvent] = []
        for code in states.keys.sorted() {
            guard var state = states[code], state.deadline(settings) == t else { continue }
            let made = state.fire(at: t, settings)
            states[code] = state.isIdle ? nil : state
            append(made, code: code, to: &out)
        }
        return out
    }

    private func append(_ made: [(GestureKind, Int, Int64)], code: UInt16, to out: inout [GestureEvent]) {
        for (kind, count, time) in made where settings.kinds.contains(kind) {
            out.append(GestureEvent(time: time, code: code, gesture: kind, count: count))
        }
    }
}
