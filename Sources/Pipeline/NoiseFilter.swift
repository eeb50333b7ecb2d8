import InputModel
import Reactive

/// The noise filters of one device, as a pure state machine over frames and time.
///
/// No threads and no timers: `process(_:)` takes a frame and returns what to deliver now;
/// `nextDeadline` says when held values are due; `fire(at:)` returns the frame of values
/// that settled by then. `filterNoise` drives it (`NoiseFilterMachine` in a `TimedSink`: one
/// gate, one scheduler timer slot) from an observable, in live mode and in replay alike.
///
/// Per code (see `CodeFilter`): keys and buttons run the `KeyDebounce` state machine
/// (bounce and spurious-release methods); switches run `DebounceState` (the `debounce`
/// operator's state machine); absolute axes a hysteresis against the last delivered value and
/// an optional `ThrottleState` (the `throttle(latest: true)` operator's); relative axes sum
/// deltas per interval. Both states change only through their operations: the inputs the
/// operators feed them (`onNext`, and `onTick` with the token of the `.arm` that set the
/// slot's deadline), plus `ThrottleState.discardKept` when the hysteresis finds a kept value
/// stale. Key repeats (value 2), `EV_MSC`,
/// `EV_SYN` codes inside a frame (`SYN_MT_REPORT`), multitouch axes and codes without a filter
/// pass unchanged. A frame keeps its order; a frame left with nothing but `EV_MSC` events
/// after filtering is dropped whole (a scan code without its key carries no state).
public struct NoiseFilter: Sendable {
    enum Kind: Sendable { case chatter, debounce, absolute, relative }

    struct CodeSlot: Sendable {
        let type: UInt16
        let code: UInt16
        var kind: Kind
        var throttle: ThrottleState<Int32>
        var key: KeyDebounce
        var debounce: DebounceState<Int32>
        var hysteresis: Int32
        /// Last value delivered (distinctUntilChanged / hysteresis reference).
        var lastOut: Int32?
        /// When held work is due, nil when none.
        var deadline: Int64?
        /// The token of the throttle's or debounce's `.arm` that set `deadline`, handed back
        /// to its `onTick` when the deadline is reached.
        var token: UInt64 = 0
        /// Relative axes: end of the summing interval and the sum so far.
        var interval: Int64
        var windowEnd: Int64?
        var sum: Int32 = 0
    }

    private var slots: [CodeSlot] = []
    /// Slot index per code: keys 0..<768, switches, absolute and relative 0..<64 each; -1 none.
    private var keyIndex = [Int16](repeating: -1, count: 768)
    private var swIndex = [Int16](repeating: -1, count: 64)
    private var absIndex = [Int16](repeating: -1, count: 64)
    private var relIndex = [Int16](repeating: -1, count: 64)
    private var lastTime: Int64 = .min
    /// Key codes whose spurious-release method turned on by itself (`.auto`), in order.
    public private(set) var spuriousTurnedOn: [UInt16] = []
    /// What the filters did so far.
    public private(set) var counters = DeviceCounters()

    /// A filter with `settings`.
    public init(settings: DeviceFilterSettings) {
        configure(settings)
    }

    /// Replaces the settings (SIGHUP reload). Codes whose filter is unchanged keep their
    /// state; held values of codes whose filter changed are dropped (counted).
    public mutating func configure(_ settings: DeviceFilterSettings) {
        var old: [UInt32: CodeSlot] = [:]
        for s in slots { old[UInt32(s.type) << 16 | UInt32(s.code)] = s }
        var reused = Set<UInt32>()
        slots = []
        keyIndex = [Int16](repeating: -1, count: 768)
        swIndex = [Int16](repeating: -1, count: 64)
        absIndex = [Int16](repeating: -1, count: 64)
        relIndex = [Int16](repeating: -1, count: 64)
        func add(_ type: UInt16, _ table: [UInt16: CodeFilter]) {
            for (code, filter) in table.sorted(by: { $0.key < $1.key }) {
                guard let slot = Self.makeSlot(type: type, code: code, filter: filter) else { continue }
                let key = UInt32(type) << 16 | UInt32(code)
                var chosen = slot
                if let previous = old[key], Self.sameFilter(previous, slot) {
                    chosen = previous
                    reused.insert(key)
                }
                let index = Int16(slots.count)
                switch type {
                case EventType.key: guard code < 768 else { continue }; keyIndex[Int(code)] = index
                case EventType.sw: guard code < 64 else { continue }; swIndex[Int(code)] = index
                case EventType.abs: guard code < 64 else { continue }; absIndex[Int(code)] = index
                default: guard code < 64 else { continue }; relIndex[Int(code)] = index
                }
                slots.append(chosen)
            }
        }
        add(EventType.key, settings.keys)
        add(EventType.sw, settings.switches)
        add(EventType.abs, settings.absolute)
        add(EventType.rel, settings.relative)
        // Every held value whose slot was not kept is lost: its filter changed, or the code
        // became passthrough or left the settings. Count it, so the counts still add up.
        for (key, previous) in old where !reused.contains(key) {
            let held = previous.kind == .chatter ? previous.key.isHolding : previous.deadline != nil
            if held { counters[Self.counterKind(previous)].dropped += 1 }
        }
    }

    private static func makeSlot(type: UInt16, code: UInt16, filter: CodeFilter) -> CodeSlot? {
        func slot(_ kind: Kind, window: Int64 = 0, hysteresis: Int32 = 0, interval: Int64 = 0,
                  key: KeyDebounce = KeyDebounce(window: 0, spuriousWindow: 0, mode: .off)) -> CodeSlot {
            CodeSlot(type: type, code: code, kind: kind, throttle: ThrottleState(dueTime: window, latest: true),
                     key: key, debounce: DebounceState(dueTime: window), hysteresis: hysteresis, lastOut: nil,
                     deadline: nil, interval: interval, windowEnd: nil)
        }
        switch filter {
        case .passthrough: return nil
        case .chatter(let w, let mode, let s):
            return w > 0 ? slot(.chatter, window: w, key: KeyDebounce(window: w, spuriousWindow: s, mode: mode)) : nil
        case .debounce(let w): return w > 0 ? slot(.debounce, window: w) : nil
        case .absolute(let h, let i): return h > 0 || i > 0 ? slot(.absolute, window: i, hysteresis: h) : nil
        case .relative(let i): return i > 0 ? slot(.relative, interval: i) : nil
        }
    }

    private static func sameFilter(_ a: CodeSlot, _ b: CodeSlot) -> Bool {
        a.kind == b.kind && a.throttle.dueTime == b.throttle.dueTime && a.hysteresis == b.hysteresis
            && a.interval == b.interval && a.key.spuriousWindow == b.key.spuriousWindow && a.key.mode == b.key.mode
    }

    private static func counterKind(_ slot: CodeSlot) -> FilterKind {
        switch slot.kind {
        case .chatter: return .keyChatter
        case .debounce: return .debounce
        case .absolute: return slot.throttle.dueTime > 0 && slot.hysteresis == 0 ? .absRate : .absHysteresis
        case .relative: return .relRate
        }
    }

    @inline(__always)
    private func slotIndex(type: UInt16, code: UInt16) -> Int {
        switch type {
        case EventType.key: return code < 768 ? Int(keyIndex[Int(code)]) : -1
        case EventType.sw: return code < 64 ? Int(swIndex[Int(code)]) : -1
        case EventType.abs: return code < 64 ? Int(absIndex[Int(code)]) : -1
        case EventType.rel: return code < 64 ? Int(relIndex[Int(code)]) : -1
        default: return -1
        }
    }

    /// The earliest time held values are due, if any.
    public var nextDeadline: Int64? {
        var best: Int64? = nil
        for s in slots {
            if let d = s.deadline, best == nil || d < best! { best = d }
        }
        return best
    }

    /// Whether any value is held for later.
    public var hasHeldValues: Bool { slots.contains { $0.deadline != nil } }

    /// Filters one frame; returns the frame to deliver now, or nil if nothing is left.
    public mutating func process(_ frame: InputFrame) -> InputFrame? {
        let now = max(frame.time, lastTime)
        lastTime = now
        counters.framesIn &+= 1
        counters.eventsIn &+= UInt64(frame.events.count)
        // The output array is built only once an event is removed: most frames pass whole and
        // are returned as they came, without allocating (R1 throughput).
        var out: [InputEvent]? = nil
        var removed = false
        var stateful = false   // anything besides EV_MSC delivered
        for (i, event) in frame.events.enumerated() {
            var keep = true
            if event.type == EventType.syn && event.code == SynCode.dropped {
                counters.synDropped &+= 1
                keep = false
            } else {
                let index = slotIndex(type: event.type, code: event.code)
                if index < 0 || (event.type == EventType.key && event.value == 2) {
                    if event.type != EventType.msc { stateful = true }
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
        let count = out?.count ?? frame.events.count
        if count == 0 || (removed && !stateful) {
            counters.framesDropped &+= 1
            return nil
        }
        counters.framesOut &+= 1
        counters.eventsOut &+= UInt64(count)
        guard let out else { return frame }
        return InputFrame(time: frame.time, events: out)
    }

    /// One input through its code's filter: the value to deliver now, or nil.
    private mutating func filter(_ index: Int, _ value: Int32, now: Int64) -> Int32? {
        let kind = Self.counterKind(slots[index])
        switch slots[index].kind {
        case .chatter:
            let step = slots[index].key.on(value == 0 ? .release : .press, at: now)
            slots[index].deadline = slots[index].key.deadline
            counters[kind].dropped &+= UInt64(step.dropped)
            return step.emit
        case .debounce:
            if slots[index].debounce.pending != nil { counters[kind].dropped &+= 1 }
            if case .arm(let deadline, let token) = slots[index].debounce.onNext(value, now: now) {
                slots[index].deadline = deadline
                slots[index].token = token
            }
            return nil
        case .absolute:
            let s = slots[index]
            if let last = s.lastOut, abs(Int64(value) - Int64(last)) <= Int64(s.hysteresis) {
                counters[.absHysteresis].dropped &+= 1
                // The axis is back near the delivered value: a value kept for the window's
                // end is stale now (latest wins), so it must not be delivered.
                if slots[index].throttle.discardKept() != nil {
                    counters[.absRate].dropped &+= 1
                }
                return nil
            }
            guard s.throttle.dueTime > 0 else {
                slots[index].lastOut = value
                return value
            }
            let hadKept = s.throttle.kept != nil
            switch slots[index].throttle.onNext(value, now: now) {
            case .emit(let v), .emitAndDisarm(let v):
                if hadKept {
                    counters[.absRate].dropped &+= 1
                    slots[index].deadline = nil
                }
                slots[index].lastOut = v
                return v
            case .arm(let deadline, let token):
                if hadKept { counters[.absRate].dropped &+= 1 }
                slots[index].deadline = deadline
                slots[index].token = token
                return nil
            default:
                if hadKept { counters[.absRate].dropped &+= 1 }
                return nil
            }
        case .relative:
            if let end = slots[index].windowEnd, now < end {
                slots[index].sum &+= value
                counters[kind].merged &+= 1
                if slots[index].deadline == nil { slots[index].deadline = end }
                return nil
            }
            slots[index].windowEnd = now + slots[index].interval
            return value
        }
    }

    /// Delivers what has settled by `time` as one frame (time = `time`), or nil.
    public mutating func fire(at time: Int64) -> InputFrame? {
        lastTime = max(lastTime, time)
        var out: [InputEvent] = []
        for index in slots.indices {
            guard let deadline = slots[index].deadline, deadline <= time else { continue }
            slots[index].deadline = nil
            let s = slots[index]
            let kind = Self.counterKind(s)
            switch s.kind {
            case .chatter:
                let step = slots[index].key.on(.timeout, at: deadline)
                slots[index].deadline = slots[index].key.deadline
                counters[kind].dropped &+= UInt64(step.dropped)
                if step.spuriousTurnedOn { spuriousTurnedOn.append(s.code) }
                if let v = step.emit {
                    counters[kind].delayed &+= 1
                    out.append(InputEvent(time: deadline, type: s.type, code: s.code, value: v))
                }
            case .absolute:
                guard case .emit(let v) = slots[index].throttle.onTick(s.token, now: deadline) else { continue }
                let unchanged = s.lastOut.map { abs(Int64(v) - Int64($0)) <= Int64(s.hysteresis) } ?? false
                if unchanged {
                    counters[.absHysteresis].dropped &+= 1
                    continue
                }
                counters[.absRate].delayed &+= 1
                slots[index].lastOut = v
                out.append(InputEvent(time: deadline, type: s.type, code: s.code, value: v))
            case .debounce:
                guard case .emit(let v) = slots[index].debounce.onTick(s.token) else { continue }
                if s.lastOut == v {
                    counters[kind].dropped &+= 1
                    continue
                }
                counters[kind].delayed &+= 1
                slots[index].lastOut = v
                out.append(InputEvent(time: deadline, type: s.type, code: s.code, value: v))
            case .relative:
                if s.sum != 0 {
                    out.append(InputEvent(time: deadline, type: s.type, code: s.code, value: s.sum))
                    slots[index].sum = 0
                    slots[index].windowEnd = deadline + s.interval
                } else {
                    slots[index].windowEnd = nil
                }
            }
        }
        guard !out.isEmpty else { return nil }
        counters.framesOut &+= 1
        counters.eventsOut &+= UInt64(out.count)
        return InputFrame(time: time, events: out)
    }
}
