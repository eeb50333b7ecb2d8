/// The wheel filter of one scroll axis: a pure state machine (state + input → state + output)
/// that removes a worn encoder's stray tick against the direction of an ongoing scroll.
///
/// A *tick* is one frame's motion on the axis, given here by its sign only (`NoiseFilter`
/// keeps the values). With `window` = W:
/// - a tick in the scroll's direction, or any tick W or more after the last delivered one
///   (a reversal after a pause), passes at once;
/// - a tick against the direction less than W after the last delivered one is *held*: a
///   second tick in the new direction less than W after it confirms the reversal and both
///   are delivered with it (the real reversal stays whole); a tick in the old direction, or
///   the window's end (`timeout` at `deadline`), drops the held one.
///
/// Why hold rather than drop the first reversed tick: dropping it would cost every real
/// reversal made inside the window its first tick; holding costs that tick only the time to
/// the second one (a scroll's ticks come 5–50 ms apart), and ticks in the scroll's direction
/// are never delayed. The price: a deliberate lone tick back, less than W after a scroll,
/// is dropped; a reversal slower than W per tick loses its first tick (its second tick comes
/// W after the last delivered one and passes as a reversal after a pause).
///
/// The machine keeps no timer: `deadline` says when a held tick's window ends, and the driver
/// calls `on(.timeout, at: deadline)` then. An input later than the deadline applies the
/// timeout first. The table of every state and transition is in docs/configuration.md.
public struct WheelFilter: Hashable, Sendable {
    /// Where the axis is.
    public enum State: Hashable, Sendable {
        /// No tick delivered yet.
        case idle
        /// Ticks in `direction` (+1 or -1) delivered, the last at `last`.
        case scrolling(direction: Int8, last: Int64)
        /// Scrolling in `direction` (last delivered tick at `last`); a reversed tick arrived at
        /// `heldAt` and is held `until` (= heldAt + W).
        case holding(direction: Int8, last: Int64, heldAt: Int64, until: Int64)
    }

    /// One input of the machine.
    public enum Input: Hashable, Sendable {
        /// A frame's motion on the axis: +1 or -1 (its sign).
        case tick(Int8)
        /// The held tick's window ended.
        case timeout
    }

    /// What one step decided.
    public struct Output: Hashable, Sendable {
        /// This tick is delivered now.
        public var pass = false
        /// This tick is held (its fate is decided later).
        public var hold = false
        /// The held tick is delivered now, together with this one (a confirmed reversal).
        public var releaseHeld = false
        /// Held ticks now known to be dropped (0 or 1).
        public var dropped = 0

        /// An output.
        public init(pass: Bool = false, hold: Bool = false, releaseHeld: Bool = false, dropped: Int = 0) {
            self.pass = pass
            self.hold = hold
            self.releaseHeld = releaseHeld
            self.dropped = dropped
        }
    }

    /// The window W (ns).
    public let window: Int64
    /// The current state.
    public private(set) var state: State = .idle

    /// A machine in `idle`.
    public init(window: Int64) { self.window = window }

    /// A machine in `state` (tests run every row of the table from its state).
    public init(window: Int64, state: State) {
        self.window = window
        self.state = state
    }

    /// When the held tick's window ends; nil when nothing is held.
    public var deadline: Int64? {
        if case .holding(_, _, _, let until) = state { return until }
        return nil
    }

    /// Whether a tick is held.
    public var isHolding: Bool { deadline != nil }

    /// One step: `input` at time `t` (for `.timeout`, the deadline).
    public mutating func on(_ input: Input, at t: Int64) -> Output {
        switch (state, input) {
        case (.idle, .timeout), (.scrolling, .timeout):
            return Output()
        case (.idle, .tick(let s)):
            state = .scrolling(direction: s, last: t)
            return Output(pass: true)
        case (.scrolling(let d, let last), .tick(let s)):
            if s == d || t >= last.addingSaturated(window) {
                state = .scrolling(direction: s, last: t)
                return Output(pass: true)
            }
            state = .holding(direction: d, last: last, heldAt: t, until: t.addingSaturated(window))
            return Output(hold: true)
        case (.holding, .timeout):
            // The pause since the last delivered tick is at least W now: nothing is ongoing.
            state = .idle
            return Output(dropped: 1)
        case (.holding(let d, _, _, let until), .tick(let s)):
            if t >= until {
                // The driver had not fired the deadline: the timeout first, then this tick.
                state = .idle
                var out = on(input, at: t)
                out.dropped += 1
                return out
            }
            state = .scrolling(direction: s, last: t)
            return s == d ? Output(pass: true, dropped: 1) : Output(pass: true, releaseHeld: true)
        }
    }
}
