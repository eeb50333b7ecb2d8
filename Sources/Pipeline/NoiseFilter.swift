import InputModel
import Reactive

/// The noise filters of one device, as a pure state machine over frames and time.
///
/// No threads and no timers: `process(_:)` takes a frame and returns what to deliver now;
/// `nextDeadline` says when held values are due; `fire(at:)` returns the frame of values
/// that settled by then. `filterNoise` drives it (`NoiseFilterMachine` in a `TimedSink`: one
/// gate, one scheduler timer slot) from an observable, in live mode and in replay alike.
///
/// Per code (see `CodeFilter`), one `CodeState` holding only its kind's fields: keys and
/// buttons run the `KeyDebounce` state machine (bounce and spurious-release methods); switches
/// run `DebounceState` (the `debounce` operator's state machine); absolute axes a hysteresis
/// against the last delivered value and an optional `ThrottleState` (the
/// `throttle(latest: true)` operator's); relative axes sum deltas per interval. The operators'
/// states change only through their operations: the inputs the operators feed them
/// (`onNext`, and `onTick` with the token of the `.arm` that set the slot's deadline), plus
/// `ThrottleState.discardKept` when the hysteresis finds a kept value stale. Key repeats
/// (value 2), `EV_MSC`, `EV_SYN` codes inside a frame (`SYN_MT_REPORT`), multitouch axes and
/// codes without a filter pass unchanged. A frame keeps its order; a frame left with nothing
/// but `EV_MSC` events after filtering is dropped whole (a scan code without its key carries
/// no state), and those events are counted (`DeviceCounters.mscDropped`).
///
/// Deadlines: the slots that hold a deadline are listed (`armed`, usually none to a few of
/// a device's codes) and the earliest is kept as they change, so `nextDeadline`, asked after
/// every frame and tick, reads a field, and `fire(at:)` visits only the armed slots.
public struct NoiseFilter: Sendable {
    var slots: [CodeSlot] = []
    /// The slots that have a deadline, in no order.
    var armed: [Int32] = []
    /// The earliest deadline of the armed slots; nil when none is armed.
    var earliest: Int64? = nil
    /// Scratch for `fire(at:)`: the due slots, kept to reuse its storage.
    var due: [Int32] = []
    /// Slot index per code: keys 0..<768, switches, absolute and relative 0..<64 each; -1 none.
    var keyIndex = [Int16](repeating: -1, count: 768)
    var swIndex = [Int16](repeating: -1, count: 64)
    var absIndex = [Int16](repeating: -1, count: 64)
    var relIndex = [Int16](repeating: -1, count: 64)
    var lastTime: Int64 = .min
    /// The last value passed unfiltered per absolute axis (0..<64) and switch (64..<128),
    /// `Int64.min` when none: a code that gets a filter on a reload starts from it, as one
    /// that changed filters starts from what its old filter delivered. (Without it, a stick
    /// observed unfiltered and then given a hysteresis let its first resting value through:
    /// the daemon suite's `gamepad-stick-noise` case.)
    var passedUnfiltered = [Int64](repeating: .min, count: 128)
    /// The wheel filters' slots (`NoiseFilter+Wheel.swift`), none on most devices: then the
    /// frame path pays one test of an empty array.
    var wheelSlots: [Int32] = []
    /// Key codes whose spurious-release method turned on by itself (`.auto`), in order.
    public private(set) var spuriousTurnedOn: [UInt16] = []
    /// What the filters did so far.
    public internal(set) var counters = DeviceCounters()
    /// BounceKeys and SlowKeys, after the code filters; nil while they are off and hold
    /// nothing, so a device without them pays one test per frame.
    var access: AccessKeys? = nil

    /// A filter with `settings`.
    public init(settings: DeviceFilterSettings) {
        _ = configure(settings)
    }

    @inline(__always)
    func slotIndex(type: UInt16, code: UInt16) -> Int {
        switch type {
        case EventType.key: return code < 768 ? Int(keyIndex[Int(code)]) : -1
        case EventType.sw: return code < 64 ? Int(swIndex[Int(code)]) : -1
        case EventType.abs: return code < 64 ? Int(absIndex[Int(code)]) : -1
        case EventType.rel: return code < 64 ? Int(relIndex[Int(code)]) : -1
        default: return -1
        }
    }

    /// Sets slot `index`'s deadline, keeping `armed` and `earliest` with it: only a change
    /// of the earliest slot's own deadline makes it look again, and then through the armed
    /// slots only.
    mutating func setDeadline(_ index: Int, _ deadline: Int64?) {
        let old = slots[index].deadline
        if old == deadline { return }
        slots[index].deadline = deadline
        if let deadline {
            if old == nil {
                slots[index].armedAt = Int32(armed.count)
                armed.append(Int32(index))
            }
            if let first = earliest, first <= deadline {
                if old == first && deadline > first { findEarliest() }   // the earliest moved later
            } else {
                earliest = deadline
            }
        } else {
            let at = Int(slots[index].armedAt)
            let moved = armed.removeLast()
            if at < armed.count {
                armed[at] = moved
                slots[Int(moved)].armedAt = Int32(at)
            }
            slots[index].armedAt = -1
            if old == earliest { findEarliest() }
        }
    }

    private mutating func findEarliest() {
        var best: Int64? = nil
        for index in armed {
            let d = slots[Int(index)].deadline!
            if best == nil || d < best! { best = d }
        }
        earliest = best
    }

    /// The earliest time held values are due, if any.
    public var nextDeadline: Int64? {
        guard let access, let held = access.nextDeadline else { return earliest }
        return earliest.map { min($0, held) } ?? held
    }

    /// Whether any value is held for later.
    public var hasHeldValues: Bool { !armed.isEmpty || access?.nextDeadline != nil }
    /// Filters one frame; returns the frame to deliver now, or nil if nothing is left.
    public mutating func process(_ frame: InputFrame) -> InputFrame? {
        let now = max(frame.time, lastTime)
        lastTime = now
        counters.framesIn &+= 1
        counters.eventsIn &+= UInt64(frame.events.count)
        // Without a wheel filter the frame goes on as it came: no copy of it (a `var` copy of
        // the frame cost R1 a retain and a release per frame).
        if !wheelSlots.isEmpty && !frame.isResync {
            guard let rest = wheelPass(frame, now: now) else { return nil }
            return filterCodes(rest, now: now)
        }
        return filterCodes(frame, now: now)
    }

    /// `process` after the wheel filters: each event through its code's filter.
    @inline(__always)
    private mutating func filterCodes(_ frame: InputFrame, now: Int64) -> InputFrame? {
        // The output array is built only once an event is removed: most frames pass whole and
        // are returned as they came, without allocating (R1 throughput).
        var out: [InputEvent]? = nil
        var removed = false
        var stateful = false   // anything besides EV_MSC delivered
        for (i, event) in frame.events.enumerated() {
            var keep = true
            if event.type == EventType.syn && event.code == SynCode.dropped {
                // A resync frame (the drop, then the device's state after it): its own rules.
                if i == 0 && frame.isResync { return resync(frame) }
                counters.synDropped &+= 1
                keep = false
            } else {
                let index = slotIndex(type: event.type, code: event.code)
                if index < 0 || (event.type == EventType.key && event.value == 2) {
                    if event.type != EventType.msc { stateful = true }
                    if index < 0, let i = Self.unfilteredIndex(type: event.type, code: event.code) {
                        passedUnfiltered[i] = Int64(event.value)
                    }
                } else if filter(index, event.value, now: now) != nil {
                    stateful = true   // a filter delivers an input unchanged or not at all
                } else {
                    keep = false
                }
            }
            if keep {
                out?.append(event)
            } else {
                if out == nil {
                    out = Array(frame.events[..<i])
                    out!.reserveCapacity(frame.events.count - 1)
                }
                removed = true
            }
        }
        if access != nil {
            // BounceKeys and SlowKeys on the keys the code filters delivered.
            var events = out ?? frame.events
            stateful = access!.filter(&events, at: now, counters: &counters)
            if events.count != frame.events.count || out != nil { removed = true; out = events }
            if access!.isIdle { access = nil }
        }
        let count = out?.count ?? frame.events.count
        if count == 0 || (removed && !stateful) {
            counters.framesDropped &+= 1
            counters.mscDropped &+= UInt64(count)   // what is left is EV_MSC only
            return nil
        }
        counters.framesOut &+= 1
        counters.eventsOut &+= UInt64(count)
        guard let out else { return frame }
        return InputFrame(time: frame.time, events: out)
    }

    /// One input through its code's filter: the value to deliver now, or nil.
    private mutating func filter(_ index: Int, _ value: Int32, now: Int64) -> Int32? {
        switch slots[index].state {
        case .chatter(var key):
            let step = key.on(value == 0 ? .release : .press, at: now)
            slots[index].state = .chatter(key)
            setDeadline(index, key.deadline)
            counters[.keyChatter].dropped &+= UInt64(step.dropped)
            return step.emit
        case .debounce(var d):
            if d.state.pending != nil { counters[.debounce].dropped &+= 1 }
            let action = d.state.onNext(value, now: now)
            if case .arm(_, let token) = action { d.token = token }
            slots[index].state = .debounce(d)
            if case .arm(let deadline, _) = action { setDeadline(index, deadline) }
            return nil
        case .hysteresis(var h):
            if let last = h.lastOut, abs(Int64(value) - Int64(last)) <= Int64(h.hysteresis) {
                counters[.absHysteresis].dropped &+= 1
                return nil
            }
            h.lastOut = value
            slots[index].state = .hysteresis(h)
            return value
        case .absolute(var a):
            if let last = a.lastOut, abs(Int64(value) - Int64(last)) <= Int64(a.hysteresis) {
                counters[.absHysteresis].dropped &+= 1
                // The axis is back near the delivered value: a value kept for the window's
                // end is stale now (latest wins), so it must not be delivered.
                if a.throttle.discardKept() != nil {
                    counters[.absRate].dropped &+= 1
                    slots[index].state = .absolute(a)
                }
                return nil
            }
            let hadKept = a.throttle.kept != nil
            if hadKept { counters[.absRate].dropped &+= 1 }   // superseded by this value
            switch a.throttle.onNext(value, now: now) {
            case .emit(let v), .emitAndDisarm(let v):
                a.lastOut = v
                slots[index].state = .absolute(a)
                if hadKept { setDeadline(index, nil) }
                return v
            case .arm(let deadline, let token):
                a.token = token
                slots[index].state = .absolute(a)
                setDeadline(index, deadline)
                return nil
            default:
                slots[index].state = .absolute(a)
                return nil
            }
        case .relative(var r):
            if let end = r.windowEnd, now < end {
                r.sum &+= value
                slots[index].state = .relative(r)
                counters[.relRate].merged &+= 1
                if slots[index].deadline == nil { setDeadline(index, end) }
                return nil
            }
            r.windowEnd = now.addingSaturated(r.interval)   // issue #34: no trap near 2⁶³ ns
            slots[index].state = .relative(r)
            return value
        case .wheel:
            return value   // never reached: wheel slots have no code index (`wheelPass`)
        }
    }

    /// Delivers what has settled by `time` as one frame (time = `time`), or nil.
    public mutating func fire(at time: Int64) -> InputFrame? {
        lastTime = max(lastTime, time)
        var out: [InputEvent] = []
        if access == nil {
            fireCodes(at: time, into: &out)
        } else {
            // The code filters' settled values and the held presses in time order (a press
            // held long enough at the very time its debounced release settles counts, then
            // ends); each code deadline is fired once, as without the accessibility filters.
            var fired = Int64.min
            while true {
                let codes = earliest.flatMap { $0 <= time && $0 > fired ? $0 : nil }
                let held = access!.nextDeadline.flatMap { $0 <= time ? $0 : nil }
                if let held, codes.map({ held <= $0 }) ?? true {
                    out += access!.fire(at: held, counters: &counters)
                } else if let codes {
                    fired = codes
                    var settled: [InputEvent] = []
                    fireCodes(at: codes, into: &settled)
                    _ = access!.filter(&settled, at: codes, counters: &counters)
                    out += settled
                } else {
                    break
                }
            }
            if access!.isIdle { access = nil }
        }
        guard !out.isEmpty else { return nil }
        counters.framesOut &+= 1
        counters.eventsOut &+= UInt64(out.count)
        return InputFrame(time: time, events: out)
    }

    /// The code filters' values settled by `time`, appended to `out`.
    private mutating func fireCodes(at time: Int64, into out: inout [InputEvent]) {
        guard let first = earliest, first <= time else { return }
        // The due slots, in slot order (the order of the frame's events); each fires once,
        // even when it arms again for a time not later than `time`.
        var due = self.due
        self.due = []
        due.removeAll(keepingCapacity: true)
        for index in armed where slots[Int(index)].deadline! <= time { due.append(index) }
        if due.count > 1 { due.sort() }
        for i in due {
            let index = Int(i)
            let deadline = slots[index].deadline!
            setDeadline(index, nil)
            let type = slots[index].type, code = slots[index].code
            switch slots[index].state {
            case .chatter(var key):
                let step = key.on(.timeout, at: deadline)
                slots[index].state = .chatter(key)
                setDeadline(index, key.deadline)
                counters[.keyChatter].dropped &+= UInt64(step.dropped)
                if step.spuriousTurnedOn { spuriousTurnedOn.append(code) }
                if let v = step.emit {
                    counters[.keyChatter].delayed &+= 1
                    out.append(InputEvent(time: deadline, type: type, code: code, value: v))
                }
            case .hysteresis:
                continue   // never armed
            case .absolute(var a):
                let action = a.throttle.onTick(a.token, now: deadline)
                guard case .emit(let v) = action else {
                    slots[index].state = .absolute(a)
                    continue
                }
                if let last = a.lastOut, abs(Int64(v) - Int64(last)) <= Int64(a.hysteresis) {
                    slots[index].state = .absolute(a)
                    counters[.absHysteresis].dropped &+= 1
                    continue
                }
                counters[.absRate].delayed &+= 1
                a.lastOut = v
                slots[index].state = .absolute(a)
                out.append(InputEvent(time: deadline, type: type, code: code, value: v))
            case .debounce(var d):
                let action = d.state.onTick(d.token)
                guard case .emit(let v) = action else {
                    slots[index].state = .debounce(d)
                    continue
                }
                if d.lastOut == v {
                    slots[index].state = .debounce(d)
                    counters[.debounce].dropped &+= 1
                    continue
                }
                counters[.debounce].delayed &+= 1
                d.lastOut = v
                slots[index].state = .debounce(d)
                out.append(InputEvent(time: deadline, type: type, code: code, value: v))
            case .wheel(var axis):
                let step = axis.machine.on(.timeout, at: deadline)
                counters[.wheel].dropped &+= UInt64(step.dropped)
                axis.held = 0
                slots[index].state = .wheel(axis)
                setDeadline(index, axis.machine.deadline)
            case .relative(var r):
                if r.sum != 0 {
                    out.append(InputEvent(time: deadline, type: type, code: code, value: r.sum))
                    r.sum = 0
                    r.windowEnd = deadline.addingSaturated(r.interval)
                } else {
                    r.windowEnd = nil
                }
                slots[index].state = .relative(r)
            }
        }
        self.due = due
    }
}
