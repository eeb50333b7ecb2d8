import InputModel
import Reactive

/// What a code's filter had delivered when it hands over (a reload that changes its filter,
/// a resync), so the next filter starts from it instead of from nothing.
enum DeliveredState: Equatable {
    /// Nothing was delivered yet (the first edge of a key passes either way).
    case unknown
    /// A key: delivered `down`; `physicallyDown` is what the device last said.
    case key(down: Bool, physicallyDown: Bool)
    /// A switch or an axis: the last value delivered.
    case value(Int32)
}

extension NoiseFilter {
    /// Replaces the settings (SIGHUP reload) and returns what the change delivers now, or nil.
    ///
    /// Codes whose filter is unchanged keep their state. A code whose filter changed, or that
    /// lost its filter, hands over (`handOver`): what its old filter held is delivered in the
    /// returned frame (stamped with the last frame's time) — a key's held release, a switch's
    /// pending value, an axis' kept value, a relative sum — and what the old filter had
    /// delivered seeds the new one, so a reload never drops an edge (a key left down on the
    /// twin, in STATE and for every watcher) nor lets one through twice. The counters keep
    /// adding up: a delivered held input counts as `delayed`, a held re-press the old
    /// machine would have swallowed as `dropped`.
    public mutating func configure(_ settings: DeviceFilterSettings) -> InputFrame? {
        var old: [UInt32: CodeSlot] = [:]
        for s in slots { old[UInt32(s.type) << 16 | UInt32(s.code)] = s }
        var handled = Set<UInt32>()
        var flushed: [InputEvent] = []
        let time = lastTime == .min ? 0 : lastTime
        slots = []
        keyIndex = [Int16](repeating: -1, count: 768)
        swIndex = [Int16](repeating: -1, count: 64)
        absIndex = [Int16](repeating: -1, count: 64)
        relIndex = [Int16](repeating: -1, count: 64)
        func add(_ type: UInt16, _ table: [UInt16: CodeFilter]) {
            for (code, filter) in table.sorted(by: { $0.key < $1.key }) {
                guard var state = Self.makeState(filter) else { continue }
                let key = UInt32(type) << 16 | UInt32(code)
                var deadline: Int64? = nil
                if let previous = old[key] {
                    handled.insert(key)
                    if Self.sameFilter(previous.state, state) {
                        state = previous.state
                        deadline = previous.deadline
                    } else {
                        let delivered = handOver(previous, at: time, into: &flushed)
                        Self.seed(&state, with: delivered)
                    }
                } else if let i = Self.unfilteredIndex(type: type, code: code), passedUnfiltered[i] != .min {
                    Self.seed(&state, with: .value(Int32(truncatingIfNeeded: passedUnfiltered[i])))
                }
                let index = Int16(slots.count)
                switch type {
                case EventType.key: guard code < 768 else { continue }; keyIndex[Int(code)] = index
                case EventType.sw: guard code < 64 else { continue }; swIndex[Int(code)] = index
                case EventType.abs: guard code < 64 else { continue }; absIndex[Int(code)] = index
                default: guard code < 64 else { continue }; relIndex[Int(code)] = index
                }
                var slot = CodeSlot(type: type, code: code, state: state)
                slot.deadline = deadline
                slots.append(slot)
            }
        }
        add(EventType.key, settings.keys)
        add(EventType.sw, settings.switches)
        add(EventType.abs, settings.absolute)
        add(EventType.rel, settings.relative)
        addWheelSlots(settings, old: old, handled: &handled)
        // Kept slots keep their deadlines: list them anew.
        armed = []
        earliest = nil
        for index in slots.indices {
            let deadline = slots[index].deadline
            slots[index].deadline = nil
            slots[index].armedAt = -1
            setDeadline(index, deadline)
        }
        // Codes that became passthrough or left the settings hand over too, with nothing to seed.
        for (key, previous) in old.sorted(by: { $0.key < $1.key }) where !handled.contains(key) {
            let delivered = handOver(previous, at: time, into: &flushed)
            if case .value(let v) = delivered, let i = Self.unfilteredIndex(type: previous.type, code: previous.code) {
                passedUnfiltered[i] = Int64(v)
            }
        }
        flushed.sort { ($0.type, $0.code) < ($1.type, $1.code) }
        // The accessibility filters see what the code filters handed over, then take their own
        // new settings (a held press whose time is now up is delivered).
        if access != nil || settings.accessibility.isOn {
            var a = access ?? AccessKeys(settings.accessibility)
            _ = a.filter(&flushed, at: time, counters: &counters)
            flushed += a.configure(settings.accessibility, at: time, counters: &counters)
            access = a.isIdle ? nil : a
        }
        guard !flushed.isEmpty else { return nil }
        counters.framesOut &+= 1
        counters.eventsOut &+= UInt64(flushed.count)
        return InputFrame(time: time, events: flushed)
    }

    /// `passedUnfiltered`'s index of an absolute axis or a switch; nil for other codes and for
    /// the multitouch axes (never filtered, and most of a touchpad's events: R1 measured their
    /// bookkeeping at 9 instructions an event).
    @inline(__always)
    static func unfilteredIndex(type: UInt16, code: UInt16) -> Int? {
        switch type {
        case EventType.abs: return code < 0x2f ? Int(code) : nil   // below ABS_MT_SLOT
        case EventType.sw: return code < 64 ? 64 + Int(code) : nil
        default: return nil
        }
    }

    /// Ends `slot`'s old filter at `time`: what it held is appended to `flushed` (delivered
    /// now), counted as its filter counts a late delivery; returns what the output says after it.
    mutating func handOver(_ slot: CodeSlot, at time: Int64, into flushed: inout [InputEvent]) -> DeliveredState {
        func deliver(_ value: Int32, _ kind: FilterKind) {
            flushed.append(InputEvent(time: time, type: slot.type, code: slot.code, value: value))
            counters[kind].delayed &+= 1
        }
        switch slot.state {
        case .chatter(let key):
            switch key.state {
            case .initial: return .unknown
            case .up: return .key(down: false, physicallyDown: false)
            case .down: return .key(down: true, physicallyDown: true)
            case .downWaiting(_, let pressed, _):
                if pressed { return .key(down: true, physicallyDown: true) }
                deliver(0, .keyChatter)   // the release held for the window's end
                return .key(down: false, physicallyDown: false)
            case .releaseDelayed:
                deliver(0, .keyChatter)   // the release held for the spurious window
                return .key(down: false, physicallyDown: false)
            case .upWaiting(_, let pressed, _, _):
                // A held re-press is never delivered late (KeyDebounce): the old machine would
                // have swallowed it at the window's end; the key waits for its physical release.
                if pressed { counters[.keyChatter].dropped &+= 1 }
                return .key(down: false, physicallyDown: pressed)
            case .upHeld:
                return .key(down: false, physicallyDown: true)
            }
        case .debounce(let d):
            if let pending = d.state.pending {
                if pending == d.lastOut {
                    counters[.debounce].dropped &+= 1
                } else {
                    deliver(pending, .debounce)
                    return .value(pending)
                }
            }
            return d.lastOut.map(DeliveredState.value) ?? .unknown
        case .hysteresis(let h):
            return h.lastOut.map(DeliveredState.value) ?? .unknown
        case .absolute(let a):
            if let kept = a.throttle.kept {
                deliver(kept, .absRate)
                return .value(kept)
            }
            return a.lastOut.map(DeliveredState.value) ?? .unknown
        case .relative(let r):
            // Merged deltas were counted when they were merged; their sum is delivered now.
            if r.sum != 0 { flushed.append(InputEvent(time: time, type: slot.type, code: slot.code, value: r.sum)) }
            return .unknown
        case .wheel(let axis):
            // A held reversed tick is the one the filter was about to drop unless a second came.
            if axis.machine.isHolding { counters[.wheel].dropped &+= 1 }
            return .unknown
        }
    }

    /// Starts a new filter's `state` from what the old one had delivered.
    static func seed(_ state: inout CodeState, with delivered: DeliveredState) {
        switch (state, delivered) {
        case (.chatter(let key), .key(let down, let physicallyDown)):
            let seeded: KeyDebounce.State = down ? .down : (physicallyDown ? .upHeld : .up)
            state = .chatter(KeyDebounce(window: key.window, spuriousWindow: key.spuriousWindow, mode: key.mode,
                                         state: seeded, spuriousOn: key.spuriousOn))
        case (.debounce(var d), .value(let v)):
            d.lastOut = v
            state = .debounce(d)
        case (.hysteresis(var h), .value(let v)):
            h.lastOut = v
            state = .hysteresis(h)
        case (.absolute(var a), .value(let v)):
            a.lastOut = v
            state = .absolute(a)
        default:
            break
        }
    }

    /// A resync frame: `SYN_DROPPED` first, then the device's state after the drop (what
    /// libevdev's resync reported, `InputFrame.isResync`). The kernel lost events, so the
    /// windows the filters were timing mean nothing now and the state the resync reports is
    /// the truth: every event passes as it is, and each of its codes restarts from the value
    /// it reports (anything its filter held is dropped, counted). The output is then equal to
    /// the device for every code the resync names; codes it does not name kept their value
    /// through the drop and keep their filter's state.
    /// Called by `process`, which has counted the frame in already.
    mutating func resync(_ frame: InputFrame) -> InputFrame? {
        counters.synDropped &+= 1
        var out: [InputEvent] = []
        out.reserveCapacity(frame.events.count - 1)
        for event in frame.events.dropFirst() {
            out.append(event)
            if access != nil, AccessKeys.applies(event), event.value != 2 { access!.resync(event, at: frame.time) }
            let index = slotIndex(type: event.type, code: event.code)
            if index < 0, let i = Self.unfilteredIndex(type: event.type, code: event.code) {
                passedUnfiltered[i] = Int64(event.value)
            }
            guard index >= 0, !(event.type == EventType.key && event.value == 2) else { continue }
            setDeadline(index, nil)
            // What the code's filter held is superseded by the state the resync reports.
            switch slots[index].state {
            case .chatter(let key):
                if key.isHolding { counters[.keyChatter].dropped &+= 1 }
                let down = event.value != 0
                slots[index].state = .chatter(KeyDebounce(window: key.window, spuriousWindow: key.spuriousWindow, mode: key.mode,
                                                          state: down ? .down : .up, spuriousOn: key.spuriousOn))
            case .debounce(let d):
                if d.state.pending != nil { counters[.debounce].dropped &+= 1 }
                var fresh = Debounced(state: DebounceState(dueTime: d.state.dueTime))
                fresh.lastOut = event.value
                slots[index].state = .debounce(fresh)
            case .hysteresis(var h):
                h.lastOut = event.value
                slots[index].state = .hysteresis(h)
            case .absolute(let a):
                if a.throttle.kept != nil { counters[.absRate].dropped &+= 1 }
                var fresh = Absolute(hysteresis: a.hysteresis, throttle: ThrottleState(dueTime: a.throttle.dueTime, latest: true))
                fresh.lastOut = event.value
                slots[index].state = .absolute(fresh)
            case .relative, .wheel:
                break   // relative axes have no state to resync (libevdev reports none)
            }
        }
        counters.framesOut &+= 1
        counters.eventsOut &+= UInt64(out.count)
        return InputFrame(time: frame.time, events: out)
    }
}
