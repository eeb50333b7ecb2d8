import InputModel
import Reactive

/// The per-code state kinds of `NoiseFilter` (one `CodeState` per filtered code, with only its
/// kind's fields), and how a code's `CodeFilter` becomes one.
extension NoiseFilter {
    /// One filtered code's state: its filter's kind, with only that kind's fields.
    enum CodeState: Sendable {
        /// Keys and buttons: the key debounce machine (it says its own deadline).
        case chatter(KeyDebounce)
        /// Switches and slow sensors: the `debounce` operator's state machine.
        case debounce(Debounced)
        /// Absolute axes without a rate limit: the hysteresis alone (most axes; a small payload
        /// on the per-event path).
        case hysteresis(Hysteresis)
        /// Absolute axes with a rate limit, and a hysteresis when it is not 0.
        case absolute(Absolute)
        /// Relative axes: deltas summed per interval.
        case relative(Relative)
        /// A scroll axis' wheel filter (`NoiseFilter+Wheel.swift`).
        case wheel(WheelAxis)
    }

    struct Debounced: Sendable {
        var state: DebounceState<Int32>
        /// The token of the `.arm` that set the slot's deadline, handed back to `onTick`.
        var token: UInt64 = 0
        /// Last value delivered: a settled value equal to it is dropped.
        var lastOut: Int32? = nil
    }

    struct Hysteresis: Sendable {
        let hysteresis: Int32
        /// Last value delivered: the hysteresis' reference.
        var lastOut: Int32? = nil
    }

    struct Absolute: Sendable {
        let hysteresis: Int32
        /// `throttle(latest: true)`'s state; its `dueTime` is the minimum interval.
        var throttle: ThrottleState<Int32>
        /// The token of the throttle's `.arm` that set the slot's deadline.
        var token: UInt64 = 0
        /// Last value delivered: the hysteresis' reference.
        var lastOut: Int32? = nil
    }

    struct Relative: Sendable {
        let interval: Int64
        /// End of the summing interval; nil when none is open.
        var windowEnd: Int64? = nil
        /// Deltas summed since the interval began.
        var sum: Int32 = 0
    }

    struct CodeSlot: Sendable {
        let type: UInt16
        let code: UInt16
        var state: CodeState
        /// When held work is due, nil when none. Changed only by `setDeadline`, which keeps
        /// `armed` and `earliest` with it.
        var deadline: Int64? = nil
        /// This slot's place in `armed`; -1 while it has no deadline.
        var armedAt: Int32 = -1
    }

    /// The state of a code whose filter is `filter`; nil when it passes unfiltered.
    static func makeState(_ filter: CodeFilter) -> CodeState? {
        switch filter {
        case .passthrough: return nil
        case .chatter(let w, let mode, let s):
            return w > 0 ? .chatter(KeyDebounce(window: w, spuriousWindow: s, mode: mode)) : nil
        case .debounce(let w): return w > 0 ? .debounce(Debounced(state: DebounceState(dueTime: w))) : nil
        case .absolute(let h, let i):
            if i > 0 { return .absolute(Absolute(hysteresis: h, throttle: ThrottleState(dueTime: i, latest: true))) }
            return h > 0 ? .hysteresis(Hysteresis(hysteresis: h)) : nil
        case .relative(let i): return i > 0 ? .relative(Relative(interval: i)) : nil
        }
    }

    /// Whether two states are of the same filter with the same parameters.
    static func sameFilter(_ a: CodeState, _ b: CodeState) -> Bool {
        switch (a, b) {
        case (.chatter(let x), .chatter(let y)):
            return x.window == y.window && x.spuriousWindow == y.spuriousWindow && x.mode == y.mode
        case (.debounce(let x), .debounce(let y)): return x.state.dueTime == y.state.dueTime
        case (.hysteresis(let x), .hysteresis(let y)): return x.hysteresis == y.hysteresis
        case (.absolute(let x), .absolute(let y)):
            return x.throttle.dueTime == y.throttle.dueTime && x.hysteresis == y.hysteresis
        case (.relative(let x), .relative(let y)): return x.interval == y.interval
        case (.wheel(let x), .wheel(let y)): return x.machine.window == y.machine.window && x.hiRes == y.hiRes
        default: return false
        }
    }

    /// The counter a code's dropped and delayed inputs count in.
    static func counterKind(_ state: CodeState) -> FilterKind {
        switch state {
        case .chatter: return .keyChatter
        case .debounce: return .debounce
        case .hysteresis: return .absHysteresis
        case .absolute(let a): return a.hysteresis == 0 ? .absRate : .absHysteresis
        case .relative: return .relRate
        case .wheel: return .wheel
        }
    }
}
