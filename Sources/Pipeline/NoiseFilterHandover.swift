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
