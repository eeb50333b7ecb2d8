/// What a key or button did, as the gesture machine reads it from a device's filtered stream
/// (docs/gestures.md).
public enum GestureKind: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    /// The key went down (every press, at once).
    case press
    /// The key came up after a press the machine saw (every release, at once).
    case release
    /// One short press, final once the multi-press window passed with no further press.
    case single
    /// Two short presses, each within the multi-press window of the release before it.
    case double
    /// Three short presses; final at the third release (there is no quadruple).
    case triple
    /// A press held for the long time or longer; ends its sequence (no single, double, triple).
    case long
    /// Repeats while a long press is held: first with `long`, then every hold period.
    case hold

    /// The order gestures are listed in (this declaration's).
    public static func < (a: GestureKind, b: GestureKind) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The count gesture of `presses` short presses (`single` … `triple`), nil for others.
    public static func counted(_ presses: Int) -> GestureKind? {
        switch presses {
        case 1: .single
        case 2: .double
        case 3: .triple
        default: nil
        }
    }
}

/// One gesture of one key of a device (the `GESTURE` message, docs/protocol.md §5).
public struct GestureEvent: Hashable, Sendable {
    /// When it happened (event time, monotonic ns): the key event's for `press` and
    /// `release`, the window's or threshold's end for the others.
    public var time: Int64
    /// The `EV_KEY` code (a key or a button).
    public var code: UInt16
    /// What happened.
    public var gesture: GestureKind
    /// `press`, `release`, `long`: which press of the sequence (1, 2, …); `single`, `double`,
    /// `triple`: 1, 2, 3; `hold`: which repeat (1 at the long time, then 2, 3, …).
    public var count: Int

    /// A gesture event.
    public init(time: Int64, code: UInt16, gesture: GestureKind, count: Int) {
        self.time = time
        self.code = code
        self.gesture = gesture
        self.count = count
    }
}

/// Which gestures a device's keys make (DEVICES' `gestures` member, 1.5): what a client such as
/// the MQTT bridge can offer before any press.
public struct DeviceGestures: Hashable, Sendable, Codable {
    /// The `EV_KEY` codes gestures are computed for.
    public var codes: [UInt16]
    /// The gestures computed, in `GestureKind` order.
    public var kinds: [GestureKind]

    /// The gestures of `codes` (sorted) and `kinds` (in order).
    public init(codes: some Sequence<UInt16>, kinds: some Sequence<GestureKind>) {
        self.codes = Set(codes).sorted()
        self.kinds = Set(kinds).sorted()
    }
}
