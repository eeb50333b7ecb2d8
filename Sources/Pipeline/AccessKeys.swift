import InputModel

/// The accessibility filters of one device's keyboard keys (`bounce_keys`, `slow_keys`;
/// docs/configuration.md, "Accessibility: BounceKeys and SlowKeys"). Both 0: off.
public struct AccessibilitySettings: Hashable, Sendable {
    /// BounceKeys: a press of a key less than this long (ns) after that key's last delivered
    /// release is ignored, with its release; 0 = off.
    public var bounceKeys: Int64
    /// SlowKeys: a press is delivered only once the key has been held this long (ns); a key
    /// released earlier was never pressed; 0 = off.
    public var slowKeys: Int64

    /// Settings with both filters at the given times (0 = off).
    public init(bounceKeys: Int64 = 0, slowKeys: Int64 = 0) {
        self.bounceKeys = bounceKeys
        self.slowKeys = slowKeys
    }

    /// Whether either filter is on.
    public var isOn: Bool { bounceKeys > 0 || slowKeys > 0 }
}

/// BounceKeys and SlowKeys for one key: a pure state machine (state + input → state + output),
/// run on the key's stream after the chatter debounce (`KeyDebounce`), so it sees the edges a
/// person made, not the switch's bounce.
///
/// - BounceKeys (`bounce` > 0): a press less than `bounce` after the key's last *delivered*
///   release is ignored, and so are its repeats and its release. An ignored press does not
///   restart the time: the window runs from the last release that was delivered. (X's AccessX
///   restarts it on the release of an ignored press, so a key tapped again and again, each
///   time within the window of the last tap, is ignored for as long as the tapping goes on.)
/// - SlowKeys (`slow` > 0): a press is held back until the key has been down for `slow`, then
///   delivered (at that time); released earlier, neither the press nor its release is
///   delivered, and the bounce window keeps running from the release before it. Repeats
///   (value 2) are dropped until the press is delivered and then for as long as the device
///   took from its press to its first repeat: autorepeat starts from the accepted press,
///   with the device's own delay and rate.
///
/// The machine keeps no timer: `deadline` says when a held press is due, and the driver
/// calls `on(.timeout, at: deadline)` then. The table of every state and transition is in
/// docs/configuration.md.
public struct AccessKey: Hashable, Sendable {
    /// Where the key is.
    public enum State: Hashable, Sendable {
        /// Delivered released; `releasedAt`: the time of its last delivered release (nil:
        /// none yet), from which the bounce window runs.
        case up(releasedAt: Int64?)
        /// SlowKeys: pressed at `pressedAt`, nothing delivered yet; `releasedAt` is kept for
        /// the bounce window should the press never count; `firstRepeat`: the device's first
        /// repeat of this press, if one came.
        case pending(pressedAt: Int64, releasedAt: Int64?, firstRepeat: Int64?)
        /// Delivered pressed at `acceptedAt` (physically pressed at `pressedAt`).
        case down(acceptedAt: Int64, pressedAt: Int64, firstRepeat: Int64?)
        /// BounceKeys: a press was ignored; the key is physically down and its repeats and
        /// release are swallowed. `releasedAt`: the delivered release the window runs from.
        case ignored(releasedAt: Int64?)
    }

    /// One input of the machine.
    public enum Input: Hashable, Sendable {
        case press, release, `repeat`, timeout
    }

    /// What one step decided.
    public struct Output: Hashable, Sendable {
        /// A value to deliver (0, 1 or 2), at `time`.
        public var emit: Int32?
        /// When `emit` is delivered: the input's time, or the deadline for an accepted press.
        public var time: Int64 = 0
        /// A press ignored by BounceKeys in this step.
        public var bounceIgnored = false
        /// A press that never counted (SlowKeys: released before it was held long enough).
        public var slowIgnored = false
        /// A press delivered late by SlowKeys in this step.
        public var slowAccepted = false
    }

    /// The current state.
    public private(set) var state: State

    /// A key in `state` (a fresh key is up with no release yet).
    public init(state: State = .up(releasedAt: nil)) { self.state = state }

    /// When the held press is due with a SlowKeys time of `slow`, nil when none is held.
    public func deadline(slow: Int64) -> Int64? {
        if case .pending(let p, _, _) = state { return p.addingSaturated(slow) }
        return nil
    }

    /// Whether the key is idle: up, nothing held or swallowed (a fresh machine would do the same
    /// unless a bounce window still runs).
    public var isUp: Bool { if case .up = state { return true } else { return false } }

    /// One step: `input` at time `t` (for `.timeout`, the deadline), with the filters' times
    /// `bounce` and `slow` (0 = off).
    public mutating func on(_ input: Input, at t: Int64, bounce: Int64, slow: Int64) -> Output {
        var out = Output()
        out.time = t
        switch (state, input) {
        case (.up(let r), .press):
            if bounce > 0, let r, t < r.addingSaturated(bounce) {
                out.bounceIgnored = true
                state = .ignored(releasedAt: r)
            } else if slow > 0 {
                state = .pending(pressedAt: t, releasedAt: r, firstRepeat: nil)
            } else {
                out.emit = 1
                state = .down(acceptedAt: t, pressedAt: t, firstRepeat: nil)
            }
        case (.up, .release):
            // A key pressed before the stream began (or a repeated release): delivered as it
            // is, and the window runs from it.
            out.emit = 0
            state = .up(releasedAt: t)
        case (.up, .repeat):
            out.emit = 2   // a key held since before the stream began
        case (.up, .timeout), (.down, .timeout), (.ignored, .timeout):
            break
        case (.pending(let p, let r, let f), .repeat):
            state = .pending(pressedAt: p, releasedAt: r, firstRepeat: f ?? t)
        case (.pending, .press):
            break   // a repeated press: the key is already held
        case (.pending(_, let r, _), .release):
            out.slowIgnored = true
            state = .up(releasedAt: r)
        case (.pending(let p, _, let f), .timeout):
            out.emit = 1
            out.time = p.addingSaturated(slow)
            out.slowAccepted = true
            state = .down(acceptedAt: out.time, pressedAt: p, firstRepeat: f)
        case (.down, .press):
            out.emit = 1   // a repeated press passes as it came (the chatter filter's business)
        case (.down(let a, let p, let f), .repeat):
            let first = f ?? t
            // The device's delay from press to first repeat, counted from the accepted press.
            if t >= a.addingSaturated(first - p) { out.emit = 2 }
            state = .down(acceptedAt: a, pressedAt: p, firstRepeat: first)
        case (.down, .release):
            out.emit = 0
            state = .up(releasedAt: t)
        case (.ignored, .press), (.ignored, .repeat):
            break
        case (.ignored(let r), .release):
            state = .up(releasedAt: r)   // the window still runs from the delivered release
        }
        return out
    }

    /// The key as a switch of settings finds it at `now` with the new SlowKeys time `slow`:
    /// a held press whose time is up (or whose filter went off) is delivered now; other
    /// states carry over (an ignored press stays ignored until its release).
    public mutating func reconfigure(slow: Int64, now: Int64) -> Output {
        guard case .pending(let p, _, let f) = state, slow == 0 || p.addingSaturated(slow) <= now else {
            return Output()
        }
        var out = Output()
        out.emit = 1
        out.time = now
        out.slowAccepted = true
        state = .down(acceptedAt: now, pressedAt: p, firstRepeat: f)
        return out
    }
}

/// The accessibility filters of one device: an `AccessKey` per keyboard key it has seen, run
/// on the frames the code filters deliver (`NoiseFilter`). Buttons (`BTN_*`) are never
/// touched: SlowKeys on a mouse button would break every click and drag.
struct AccessKeys: Sendable {
    private(set) var settings: AccessibilitySettings
    private var keys: [UInt16: AccessKey] = [:]
    /// The held presses' deadlines (SlowKeys), by code.
    private var pending: [UInt16: Int64] = [:]

    init(_ settings: AccessibilitySettings) { self.settings = settings }

    /// Whether the filters are off and no key is held or swallowed: the device can do without.
    var isIdle: Bool { !settings.isOn && keys.values.allSatisfy(\.isUp) }

    /// The earliest held press' deadline.
    var nextDeadline: Int64? { pending.values.min() }

    /// Whether `event` is one of the keys these filters see.
    @inline(__always)
    static func applies(_ event: InputEvent) -> Bool {
        event.type == EventType.key && !CodeRange.isButton(event.code)
    }

    /// One step for one event of a key: the event to deliver, or nil.
    mutating func filter(_ event: InputEvent, at now: Int64, counters: inout DeviceCounters) -> InputEvent? {
        let input: AccessKey.Input = event.value == 0 ? .release : event.value == 1 ? .press : .repeat
        var key = keys[event.code] ?? AccessKey()
        let step = key.on(input, at: now, bounce: settings.bounceKeys, slow: settings.slowKeys)
        keys[event.code] = key
        pending[event.code] = key.deadline(slow: settings.slowKeys)
        count(step, &counters)
        guard let v = step.emit else { return nil }
        return InputEvent(time: event.time, type: event.type, code: event.code, value: v)
    }

    /// Filters a frame's events in place; returns false when nothing but `EV_MSC` is left (the
    /// caller drops the frame).
    mutating func filter(_ events: inout [InputEvent], at now: Int64, counters: inout DeviceCounters) -> Bool {
        var stateful = false
        var out: [InputEvent] = []
        out.reserveCapacity(events.count)
        for event in events {
            if Self.applies(event) {
                if let e = filter(event, at: now, counters: &counters) { out.append(e); stateful = true }
            } else {
                out.append(event)
                if event.type != EventType.msc { stateful = true }
            }
        }
        events = out
        return stateful
    }

    /// The held presses due by `time`, in time then code order, as events at their deadlines.
    mutating func fire(at time: Int64, counters: inout DeviceCounters) -> [InputEvent] {
        let due = pending.filter { $0.value <= time }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        var out: [InputEvent] = []
        for (code, deadline) in due {
            var key = keys[code]!
            let step = key.on(.timeout, at: deadline, bounce: settings.bounceKeys, slow: settings.slowKeys)
            keys[code] = key
            pending[code] = nil
            count(step, &counters)
            if let v = step.emit { out.append(InputEvent(time: step.time, type: EventType.key, code: code, value: v)) }
        }
        return out
    }

    /// New settings at `now`: presses held past the new SlowKeys time (or with SlowKeys off)
    /// are delivered now, in code order; everything else carries over.
    mutating func configure(_ new: AccessibilitySettings, at now: Int64, counters: inout DeviceCounters) -> [InputEvent] {
        settings = new
        var out: [InputEvent] = []
        for code in pending.keys.sorted() {
            var key = keys[code]!
            let step = key.reconfigure(slow: new.slowKeys, now: now)
            keys[code] = key
            pending[code] = key.deadline(slow: new.slowKeys)
            count(step, &counters)
            if let v = step.emit { out.append(InputEvent(time: now, type: EventType.key, code: code, value: v)) }
        }
        return out
    }

    /// A resync reported `event`'s key as the device has it: that is the truth now (what the
    /// filters held or swallowed is superseded), and the window runs from a reported release.
    mutating func resync(_ event: InputEvent, at now: Int64) {
        keys[event.code] = AccessKey(state: event.value == 0 ? .up(releasedAt: now)
                                     : .down(acceptedAt: now, pressedAt: now, firstRepeat: nil))
        pending[event.code] = nil
    }

    private func count(_ step: AccessKey.Output, _ counters: inout DeviceCounters) {
        if step.bounceIgnored { counters[.bounceKeys].dropped &+= 1 }
        if step.slowIgnored { counters[.slowKeys].dropped &+= 1 }
        if step.slowAccepted { counters[.slowKeys].delayed &+= 1 }
    }
}
