import InputModel

/// The wheel filter inside `NoiseFilter`: one slot per filtered scroll axis (`REL_WHEEL` with
/// `REL_WHEEL_HI_RES`, `REL_HWHEEL` with `REL_HWHEEL_HI_RES`), run on whole frames before the
/// per-code filters, because an axis' two codes must be decided together.
///
/// On an axis whose device declares the high-resolution code, the filter reads the
/// high-resolution motion (a frame with the low-resolution code alone counts as 120 × its
/// value) and delivers the low-resolution code recomputed from the high-resolution motion it
/// delivers: the detents are the delivered high-resolution sum divided by 120, the remainder
/// (under one detent) carried to the next frame. So at every moment the delivered
/// high-resolution sum is 120 × the delivered detents + that remainder, whatever the filter
/// dropped; a device with 120 units a detent delivers exactly what it sent, unchanged frames
/// pass untouched (no allocation). Without the high-resolution code the low-resolution
/// values are the motion.
extension NoiseFilter {
    /// One scroll axis' wheel filter state.
    struct WheelAxis: Sendable {
        /// `REL_WHEEL` or `REL_HWHEEL`.
        let lo: UInt16
        /// Its high-resolution code.
        let hi: UInt16
        /// Whether the device declares `hi`.
        let hiRes: Bool
        var machine: WheelFilter
        /// The held tick's motion (in high-resolution units on a high-resolution axis).
        var held: Int32 = 0
        /// High-resolution motion delivered but not yet delivered as a detent (|r| < 120).
        var remainder: Int32 = 0
    }

    /// Not an event type: the type of wheel slots, so they never collide with a code's slot
    /// (a `REL_WHEEL` rate limit is a slot of its own, run after the wheel filter).
    static let wheelSlotType: UInt16 = 0xFFFF

    /// The high-resolution code of a scroll axis.
    static func hiResCode(_ lo: UInt16) -> UInt16 { lo == 8 ? 11 : 12 }

    /// Runs the wheel filters over `frame` (`process`, before the per-code filters): the frame
    /// as it goes on (the same frame when no axis changed it), or nil when nothing is left
    /// (counted as a dropped frame).
    mutating func wheelPass(_ frame: InputFrame, now: Int64) -> InputFrame? {
        var events = frame.events
        var changed = false
        for w in wheelSlots {
            let index = Int(w)
            guard case .wheel(var axis) = slots[index].state else { continue }
            var lo: Int32 = 0, hi: Int32 = 0, nLo = 0, nHi = 0, first = -1
            for (i, e) in events.enumerated() where e.type == EventType.rel {
                if e.code == axis.lo {
                    lo &+= e.value
                    nLo += 1
                } else if axis.hiRes && e.code == axis.hi {
                    hi &+= e.value
                    nHi += 1
                } else {
                    continue
                }
                if first < 0 { first = i }
            }
            guard first >= 0 else { continue }
            let motion: Int32 = axis.hiRes ? (nHi > 0 ? hi : lo &* 120) : lo
            guard motion != 0 else { continue }
            let step = axis.machine.on(.tick(motion > 0 ? 1 : -1), at: now)
            counters[.wheel].dropped &+= UInt64(step.dropped)
            var delivered: Int32 = 0
            if step.pass {
                delivered = motion
                if step.releaseHeld {
                    delivered &+= axis.held
                    counters[.wheel].delayed &+= 1
                }
            }
            if step.dropped > 0 || step.releaseHeld { axis.held = 0 }
            if step.hold { axis.held = motion }
            var outLo = delivered, outHi: Int32 = 0
            if axis.hiRes {
                let total = axis.remainder &+ delivered
                outLo = total / 120
                axis.remainder = total &- outLo &* 120
                outHi = delivered
            }
            slots[index].state = .wheel(axis)
            setDeadline(index, axis.machine.deadline)
            // The frame's own events say exactly this: leave it (the common case).
            let loSame = outLo == 0 ? nLo == 0 : (nLo == 1 && lo == outLo)
            let hiSame = !axis.hiRes || (outHi == 0 ? nHi == 0 : (nHi == 1 && hi == outHi))
            if loSame && hiSame { continue }
            let time = events[first].time
            var out: [InputEvent] = []
            out.reserveCapacity(events.count + 1)
            for (i, e) in events.enumerated() {
                if i == first {
                    if outLo != 0 { out.append(InputEvent(time: time, type: EventType.rel, code: axis.lo, value: outLo)) }
                    if outHi != 0 { out.append(InputEvent(time: time, type: EventType.rel, code: axis.hi, value: outHi)) }
                }
                if e.type == EventType.rel && (e.code == axis.lo || (axis.hiRes && e.code == axis.hi)) { continue }
                out.append(e)
            }
            events = out
            changed = true
        }
        guard changed else { return frame }
        // Nothing left, or nothing but EV_MSC (a scan code carries no state): the frame goes.
        if events.allSatisfy({ $0.type == EventType.msc }) {
            counters.framesDropped &+= 1
            counters.mscDropped &+= UInt64(events.count)
            return nil
        }
        return InputFrame(time: frame.time, events: events)
    }

    /// The wheel slots for `settings`, each keeping its old state when its setting is the same;
    /// a changed one starts anew from the old remainder (a held tick is dropped, counted: it is
    /// the tick the old filter was about to drop unless a second one came).
    mutating func addWheelSlots(_ settings: DeviceFilterSettings, old: [UInt32: CodeSlot], handled: inout Set<UInt32>) {
        wheelSlots = []
        for (lo, setting) in settings.wheel.sorted(by: { $0.key < $1.key }) where setting.window > 0 && (lo == 6 || lo == 8) {
            let key = UInt32(Self.wheelSlotType) << 16 | UInt32(lo)
            var axis = WheelAxis(lo: lo, hi: Self.hiResCode(lo), hiRes: setting.hiRes, machine: WheelFilter(window: setting.window))
            var deadline: Int64? = nil
            if let previous = old[key], case .wheel(let was) = previous.state {
                handled.insert(key)
                if was.machine.window == setting.window && was.hiRes == setting.hiRes {
                    axis = was
                    deadline = previous.deadline
                } else {
                    if was.machine.isHolding { counters[.wheel].dropped &+= 1 }
                    if was.hiRes == setting.hiRes { axis.remainder = was.remainder }
                }
            }
            var slot = CodeSlot(type: Self.wheelSlotType, code: lo, state: .wheel(axis))
            slot.deadline = deadline
            wheelSlots.append(Int32(slots.count))
            slots.append(slot)
        }
    }
}
