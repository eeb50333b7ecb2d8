/// Groups evdev events into frames: everything up to a `SYN_REPORT` is one `InputFrame`.
///
/// The one frame rule of evflow: the live reader, the replay (`Recording`'s frame table) and
/// the recording analyses all assemble through it, so a recorded `SYN_DROPPED` is filtered as
/// a live one is. What `SYN_DROPPED` means (the kernel's event-codes documentation; libevdev):
/// the reader's buffer overflowed and events were lost, so the frame in progress is
/// incomplete. Its events are discarded, and the `SYN_DROPPED` becomes a frame of its own
/// holding just that event, so downstream can count drops. What follows up to the next
/// `SYN_REPORT` is the resync: live, libevdev hands out the differences between the state it
/// knew and the device's state then, ending in its own `SYN_REPORT`; in a recording it is
/// whatever the recorder wrote there. Either way it is an ordinary frame.
/// `SYN_CONFIG` and `SYN_MT_REPORT` (multitouch protocol A) stay inside their frame.
public struct FrameAssembler: Sendable {
    /// What one event does to the frame being assembled (`step(_:)`).
    public enum Step: Sendable {
        /// The event belongs to the frame in progress.
        case append
        /// `SYN_REPORT`: the frame in progress is complete (the report is not one of its events).
        case report
        /// `SYN_DROPPED`: the frame in progress is incomplete and discarded; the event is a
        /// frame of its own.
        case dropped
    }

    /// Events of the unfinished frame.
    public var pending: [InputEvent] { reported ? [] : buffer }
    /// `SYN_DROPPED` events seen.
    public private(set) var droppedCount = 0

    /// The frame being assembled — or, while `reported`, the last frame handed out, still in
    /// the buffer: it is emptied on the next event, not at the report, so that by then the
    /// frame has usually been delivered and dropped, the buffer is uniquely referenced again,
    /// and emptying it keeps its storage. Emptied at the report, it would still be shared with
    /// the frame just made, and every live frame would allocate a new array (≈ 500
    /// instructions of U1's frame, docs/benchmarks.md). A frame still held downstream keeps
    /// its events: emptying a shared buffer allocates a new one, as before.
    private var buffer: [InputEvent] = []
    private var reported = false

    /// Creates an empty assembler.
    public init() {
        buffer.reserveCapacity(16)
    }

    /// The rule itself, for callers that keep frames their own way (`FrameTable` stores a
    /// recording's frames flat); `feed(_:)` applies it to `pending`.
    @inlinable @inline(__always)
    public static func step(_ event: InputEvent) -> Step {
        // Literals, not `EventType.syn` / `SynCode`: inlined into another module, a `static let`
        // is read through its accessor, once per event of a replay.
        guard event.type == 0 /* EV_SYN */ else { return .append }
        switch event.code {
        case 0 /* SYN_REPORT */: return .report
        case 3 /* SYN_DROPPED */: return .dropped
        default: return .append
        }
    }

    /// Adds one event; returns the frame it completes, if any.
    public mutating func feed(_ event: InputEvent) -> InputFrame? {
        if reported {
            buffer.removeAll(keepingCapacity: true)
            reported = false
        }
        switch Self.step(event) {
        case .append:
            buffer.append(event)
            return nil
        case .report:
            reported = true
            return InputFrame(time: event.time, events: buffer)
        case .dropped:
            droppedCount += 1
            buffer.removeAll(keepingCapacity: true)
            return InputFrame(time: event.time, events: [event])
        }
    }

    /// Forgets the unfinished frame (the device went away in the middle of it).
    public mutating func discardPending() {
        buffer.removeAll(keepingCapacity: true)
        reported = false
    }

    /// The complete frames of `events` (in time order), and the events after the last frame
    /// (nothing says they were a complete report, so they are no frame).
    public static func frames(of events: [InputEvent]) -> (frames: [InputFrame], incomplete: [InputEvent]) {
        var assembler = FrameAssembler()
        var frames: [InputFrame] = []
        for event in events {
            if let frame = assembler.feed(event) { frames.append(frame) }
        }
        return (frames, assembler.pending)
    }
}
