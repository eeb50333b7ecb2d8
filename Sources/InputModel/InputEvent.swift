/// One evdev event: `struct input_event` with its timestamp as monotonic nanoseconds.
///
/// Live devices are switched to `CLOCK_MONOTONIC`, and replayed recordings are mapped onto the
/// same axis, so `time` is directly comparable with scheduler time everywhere in evflow.
public struct InputEvent: Hashable, Sendable {
    /// Monotonic timestamp in nanoseconds.
    public var time: Int64
    /// Event type (`EV_KEY`, `EV_REL`, ...).
    public var type: UInt16
    /// Event code within the type (`KEY_A`, `REL_X`, ...).
    public var code: UInt16
    /// Event value (1 press / 0 release / 2 repeat for keys; delta for relative axes; ...).
    public var value: Int32

    /// Creates an event.
    @inlinable
    public init(time: Int64, type: UInt16, code: UInt16, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }

    /// Whether this is the `SYN_REPORT` that ends a frame.
    @inlinable
    public var isSynReport: Bool { type == EventType.syn && code == SynCode.report }
}

/// All events of one hardware report: everything up to (not including) its `SYN_REPORT`.
///
/// Filters change which events are in a frame but never split one; an empty frame after
/// filtering is dropped rather than delivered.
public struct InputFrame: Hashable, Sendable {
    /// Time of the frame's `SYN_REPORT` (monotonic ns).
    public var time: Int64
    /// The events of the frame in the order the kernel reported them, without the `SYN_REPORT`.
    public var events: [InputEvent]

    /// Creates a frame.
    @inlinable
    public init(time: Int64, events: [InputEvent]) {
        self.time = time
        self.events = events
    }
}

extension InputFrame {
    /// A resync frame: a `SYN_DROPPED` first, then the events that bring a reader from the
    /// state it knew to the device's state after the drop (libevdev's resync, which the live
    /// reader gathers into one frame). The noise filter passes such a frame whole and restarts
    /// the codes it names from the values it reports, so a virtual twin equals the device
    /// again. A recorded `SYN_DROPPED` is a frame of its own (`FrameAssembler`), never this.
    @inlinable
    public static func resync(dropped: InputEvent, state: [InputEvent], time: Int64) -> InputFrame {
        InputFrame(time: time, events: [dropped] + state)
    }

    /// Whether this is a resync frame (`resync(dropped:state:time:)`).
    @inlinable
    public var isResync: Bool {
        events.count > 1 && events[0].type == 0x00 && events[0].code == 3   // EV_SYN, SYN_DROPPED
    }
}

/// Event type numbers from `linux/input-event-codes.h` that evflow's logic branches on.
/// Names for every type and code come from libevdev's tables (`EventNames`).
public enum EventType {
    public static let syn: UInt16 = 0x00
    public static let key: UInt16 = 0x01
    public static let rel: UInt16 = 0x02
    public static let abs: UInt16 = 0x03
    public static let msc: UInt16 = 0x04
    public static let sw: UInt16 = 0x05
    public static let led: UInt16 = 0x11
    public static let snd: UInt16 = 0x12
    public static let rep: UInt16 = 0x14
    public static let ff: UInt16 = 0x15
    public static let pwr: UInt16 = 0x16
    public static let ffStatus: UInt16 = 0x17
    /// `EV_MAX`.
    public static let max: UInt16 = 0x1f
}

/// `SYN_*` codes.
public enum SynCode {
    public static let report: UInt16 = 0
    public static let config: UInt16 = 1
    public static let mtReport: UInt16 = 2
    public static let dropped: UInt16 = 3
}

/// Code ranges that classify `EV_KEY` and `EV_ABS` codes.
public enum CodeRange {
    /// `BTN_MISC` (0x100) up to `BTN_GEAR_UP` (0x151): buttons rather than keys.
    public static let buttons: ClosedRange<UInt16> = 0x100...0x151
    /// `BTN_TRIGGER_HAPPY` (0x2c0) up to 0x2e7: joystick buttons.
    public static let triggerHappy: ClosedRange<UInt16> = 0x2c0...0x2e7
    /// `ABS_MT_SLOT` (0x2f) up to `ABS_MT_TOOL_Y` (0x3d): multitouch axes.
    public static let multitouch: ClosedRange<UInt16> = 0x2f...0x3d

    /// Whether an `EV_KEY` code is a button (mouse, joystick, stylus, touch) rather than a key.
    @inlinable
    public static func isButton(_ code: UInt16) -> Bool {
        buttons.contains(code) || triggerHappy.contains(code)
    }
}
