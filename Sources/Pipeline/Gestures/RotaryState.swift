import InputModel

/// Which relative axes are rotary encoders (docs/gestures.md, "Rotary steps").
public enum RotaryCodes {
    /// `REL_DIAL`: a knob's rotation (PowerMate, Surface Dial, knob macro pads).
    public static let dial: UInt16 = 7
    /// `REL_WHEEL`, `REL_HWHEEL`: scroll wheels, rotary steps only on a device that is no pointer.
    static let wheels: [UInt16] = [8, 6]
    static let relX: UInt16 = 0, relY: UInt16 = 1

    /// The rotary codes of a device with gestures and no `rotary:` in its rules: `REL_DIAL`,
    /// and the wheels of a device that does not move a pointer (no `REL_X` and `REL_Y`: a
    /// knob that reports its turns as a wheel, not a mouse's scroll wheel).
    public static func defaults(for device: DeviceInfo) -> Set<UInt16> {
        let rel = device.capabilities[EventType.rel] ?? []
        var out: Set<UInt16> = rel.contains(dial) ? [dial] : []
        if !(rel.contains(relX) && rel.contains(relY)) { out.formUnion(wheels.filter { rel.contains($0) }) }
        return out
    }
}

/// One rotary code's step machine (docs/gestures.md, "Rotary steps"): a pure value. A tick
/// with no window open is a step at once and opens a window of `step`; ticks of the same
/// direction inside the window add up and are one step at its end (which opens the next
/// window: a steady turn makes one step per window); a tick of the other direction ends the
/// window at once — what was added up is a step then, and the tick starts anew.
struct RotaryState: Hashable, Sendable {
    /// The open window's end (nil: none open).
    private(set) var windowEnd: Int64?
    /// Detents added up in the open window, signed (0: none).
    private(set) var pending: Int64 = 0

    /// When `fire` is due.
    var deadline: Int64? { windowEnd }
    var isIdle: Bool { windowEnd == nil }

    private static func step(_ signed: Int64, _ t: Int64) -> (GestureKind, Int, Int64) {
        (signed > 0 ? .rotateRight : .rotateLeft, Int(clamping: signed.magnitude), t)
    }

    /// A tick of `value` detents (signed) at `t`; every deadline before `t` was fired first.
    mutating func tick(_ value: Int32, at t: Int64, window: Int64) -> [(GestureKind, Int, Int64)] {
        guard value != 0 else { return [] }
        let v = Int64(value)
        guard windowEnd != nil else {
            windowEnd = t + window
            return [Self.step(v, t)]
        }
        if pending == 0 || (pending > 0) == (v > 0) {
            pending += v
            return []
        }
        // A reversal: what was added up ends now, and the tick is a step of its own.
        let out = [Self.step(pending, t), Self.step(v, t)]
        pending = 0
        windowEnd = t + window
        return out
    }

    /// The window's end `t` (= `deadline`) has come.
    mutating func fire(at t: Int64, window: Int64) -> [(GestureKind, Int, Int64)] {
        guard windowEnd != nil else { return [] }
        guard pending != 0 else {
            windowEnd = nil
            return []
        }
        let out = [Self.step(pending, t)]
        pending = 0
        windowEnd = t + window
        return out
    }
}
