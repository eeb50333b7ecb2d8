import Reactive

/// When the spurious-release method of `KeyDebounce` is used.
public enum SpuriousMode: String, Hashable, Sendable, CaseIterable {
    /// Off until the fault is first seen on this device and code, then on (the default).
    case auto
    /// On from the start: every release is held for the spurious window.
    case always
    /// Never: bounce method only.
    case off
}

/// The debounce of one key or button: a pure state machine (state + input → state + output),
/// after libinput's two methods.
///
/// - *Bounce*: a press on a released key is delivered at once and opens a window of `window`
///   from that edge; edges inside a window are swallowed, and at its end the key's physical
///   state is compared with the delivered one. A release delivered at once opens a window too.
/// - *Spurious release* (when `spuriousOn`): a release is held for `spuriousWindow`; a
///   re-press inside it swallows both (the key stayed down). In `.auto` mode this turns on
///   the first time a release is followed within `spuriousWindow` by a re-press that is still
///   held when the window after the release ends.
///
/// Never invents a click: a re-press inside the window after a delivered release is never
/// delivered later; the code waits for the physical release instead (`upHeld`).
/// The machine keeps no timer: `deadline` says when the running window ends, and the driver
/// calls `on(.timeout, at: deadline)` then.
/// Key repeats (value 2) are not inputs: the caller passes them on untouched.
/// The table of every state and transition is in docs/configuration.md.
public struct KeyDebounce: Hashable, Sendable {
    /// Where the key is: what the output last said (the case) and, while a window runs,
    /// what the device last said (`pressed`).
    public enum State: Hashable, Sendable {
        /// Nothing delivered yet: the key's state is not known (a recording may start with
        /// the release of a key pressed before it). Either edge is delivered at once.
        case initial
        /// Released, delivered released, no window.
        case up
        /// Pressed, delivered pressed, no window.
        case down
        /// A press was delivered; the window after it runs `until`. `pressed`: whether the
        /// device says pressed now; `lastEdge`: time of the last physical edge.
        case downWaiting(until: Int64, pressed: Bool, lastEdge: Int64)
        /// A release was delivered (or a swallowed press ended) at `releasedAt`; the window
        /// runs `until`. `pressed`: whether the device says pressed now; `repressAt`: the
        /// first re-press inside the window.
        case upWaiting(until: Int64, pressed: Bool, releasedAt: Int64, repressAt: Int64?)
        /// Spurious mode: a release at `releasedAt` is held `until` (delivered pressed).
        case releaseDelayed(until: Int64, releasedAt: Int64)
        /// A re-press swallowed after a release; physically pressed, delivered released, no
        /// window: waiting for the physical release.
        case upHeld
    }

    /// One input of the machine.
    public enum Input: Hashable, Sendable {
        case press, release, timeout
    }

    /// What one step decided.
    public struct Output: Hashable, Sendable {
        /// A value to deliver (0 or 1), at `time`.
        public var emit: Int32?
        /// When `emit` is delivered: the input's time (at once) or the deadline (delayed).
        public var time: Int64 = 0
        /// The emitted value was held (delivered at a window's end).
        public var delayed = false
        /// Inputs now known to be dropped.
        public var dropped = 0
        /// The spurious-release method turned on in this step.
        public var spuriousTurnedOn = false
    }

    /// Bounce window (ns).
    public let window: Int64
    /// Spurious window (ns).
    public let spuriousWindow: Int64
    /// When the spurious method is used.
    public let mode: SpuriousMode
    /// Whether releases are held for the spurious window now.
    public private(set) var spuriousOn: Bool
    /// The current state.
    public private(set) var state: State = .initial

    /// A key whose state is not known yet (`initial`).
    public init(window: Int64, spuriousWindow: Int64, mode: SpuriousMode) {
        self.window = window
        self.spuriousWindow = spuriousWindow
        self.mode = mode
        spuriousOn = mode == .always && spuriousWindow > 0
    }

    /// A machine in `state` (tests run every row of the table from its state).
    public init(window: Int64, spuriousWindow: Int64, mode: SpuriousMode, state: State, spuriousOn: Bool) {
        self.init(window: window, spuriousWindow: spuriousWindow, mode: mode)
        self.state = state
        self.spuriousOn = spuriousOn
    }

    /// When the running window or held release ends, nil when none.
    public var deadline: Int64? {
        switch state {
        case .initial, .up, .down, .upHeld: return nil
        case .downWaiting(let t, _, _), .upWaiting(let t, _, _, _), .releaseDelayed(let t, _): return t
        }
    }

    /// Whether an input is held whose fate is still open (at most one): a release inside
    /// the window after a press, a re-press inside the window after a release, or a release
    /// held for the spurious window.
    public var isHolding: Bool {
        switch state {
        case .initial, .up, .down, .upHeld: return false
        case .downWaiting(_, let pressed, _): return !pressed
        case .upWaiting(_, let pressed, _, _): return pressed
        case .releaseDelayed: return true
        }
    }

    /// The window after a physical edge at `edge`, as seen at `now`: `upWaiting` while it
    /// runs, `up` once it is over.
    private func afterRelease(edge: Int64, now: Int64) -> State {
        let end = Self.deadline(edge, plus: window)
        return end > now ? .upWaiting(until: end, pressed: false, releasedAt: edge, repressAt: nil) : .up
    }

    /// `t + span`, saturating: a window's end for an edge near the end of time is "never",
    /// not a trap (issue #34: a recorded edge at 9223372036.854 s trapped `evflowctl analyze`).
    @inline(__always)
    static func deadline(_ t: Int64, plus span: Int64) -> Int64 { t.addingSaturated(span) }

    /// One step: `input` at time `t` (for `.timeout`, the deadline).
    public mutating func on(_ input: Input, at t: Int64) -> Output {
        var out = Output()
        out.time = t
        switch (state, input) {
        // initial: the first edge, whichever it is, goes out at once
        case (.initial, .release):
            out.emit = 0
            state = afterRelease(edge: t, now: t)
        case (.initial, .timeout):
            break
        // up
        case (.initial, .press), (.up, .press):
            out.emit = 1
            state = .downWaiting(until: Self.deadline(t, plus: window), pressed: true, lastEdge: t)
        case (.up, .release), (.up, .timeout):
            if input == .release { out.dropped = 1 }   // repeated release
        // down
        case (.down, .release):
            if spuriousOn {
                state = .releaseDelayed(until: Self.deadline(t, plus: spuriousWindow), releasedAt: t)
            } else {
                out.emit = 0
                state = afterRelease(edge: t, now: t)
            }
        case (.down, .press), (.down, .timeout):
            if input == .press { out.dropped = 1 }   // repeated press
        // downWaiting: edges swallowed; a release is held until the window ends
        case (.downWaiting(let until, let pressed, _), .press):
            out.dropped = pressed ? 1 : 2   // repeated press, or the held release and this press
            state = .downWaiting(until: until, pressed: true, lastEdge: t)
        case (.downWaiting(let until, let pressed, _), .release):
            if pressed {
                state = .downWaiting(until: until, pressed: false, lastEdge: t)   // held
            } else {
                out.dropped = 1   // repeated release
            }
        case (.downWaiting(let until, let pressed, let lastEdge), .timeout):
            if pressed {
                state = .down
            } else {
                out.emit = 0
                out.time = until
                out.delayed = true
                state = afterRelease(edge: lastEdge, now: until)
            }
        // upWaiting: edges swallowed; a re-press still held at the window's end is not a click
        case (.upWaiting(let until, let pressed, let releasedAt, let repressAt), .press):
            if pressed { out.dropped = 1 }
            state = .upWaiting(until: until, pressed: true, releasedAt: releasedAt, repressAt: repressAt ?? t)
        case (.upWaiting(let until, let pressed, let releasedAt, let repressAt), .release):
            if pressed { out.dropped = 2 } else { out.dropped = 1 }   // the held re-press and this release
            state = .upWaiting(until: until, pressed: false, releasedAt: releasedAt, repressAt: repressAt)
        case (.upWaiting(_, let pressed, let releasedAt, let repressAt), .timeout):
            if pressed {
                out.dropped = 1   // the held re-press: never delivered late as a new click
                state = .upHeld
                if !spuriousOn, mode == .auto, spuriousWindow > 0, let repressAt,
                   repressAt - releasedAt <= spuriousWindow {
                    spuriousOn = true
                    out.spuriousTurnedOn = true
                }
            } else {
                state = .up
            }
        // releaseDelayed: a re-press inside the spurious window swallows the release
        case (.releaseDelayed, .press):
            out.dropped = 2
            state = .downWaiting(until: Self.deadline(t, plus: window), pressed: true, lastEdge: t)
        case (.releaseDelayed(let until, let releasedAt), .release):
            out.dropped = 1
            state = .releaseDelayed(until: until, releasedAt: releasedAt)
        case (.releaseDelayed(let until, let releasedAt), .timeout):
            out.emit = 0
            out.time = until
            out.delayed = true
            state = afterRelease(edge: releasedAt, now: until)
        // upHeld: wait for the physical release; it opens a window (its bounce is swallowed)
        case (.upHeld, .release):
            out.dropped = 1
            state = .upWaiting(until: Self.deadline(t, plus: window), pressed: false, releasedAt: t, repressAt: nil)
        case (.upHeld, .press), (.upHeld, .timeout):
            if input == .press { out.dropped = 1 }
        }
        return out
    }
}
