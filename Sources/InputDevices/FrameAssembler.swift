import InputModel

/// Groups evdev events into frames: everything up to a `SYN_REPORT` is one `InputFrame`.
///
/// `SYN_DROPPED` (the kernel's buffer overflowed) discards the unfinished frame — its events
/// are incomplete, as the evdev protocol says — and becomes a frame of its own holding just
/// that event, so downstream can count drops; the resync events libevdev then hands out are
/// ordinary frames ending in its `SYN_REPORT`.
public struct FrameAssembler: Sendable {
    /// Events of the unfinished frame.
    public private(set) var pending: [InputEvent] = []
    /// `SYN_DROPPED` events seen.
    public private(set) var droppedCount = 0

    /// Creates an empty assembler.
    public init() {
        pending.reserveCapacity(16)
    }

    /// Adds one event; returns the frame it completes, if any.
    public mutating func feed(_ event: InputEvent) -> InputFrame? {
        guard event.type == EventType.syn else {
            pending.append(event)
            return nil
        }
        switch event.code {
        case SynCode.report:
            let frame = InputFrame(time: event.time, events: pending)
            pending.removeAll(keepingCapacity: true)
            return frame
        case SynCode.dropped:
            droppedCount += 1
            pending.removeAll(keepingCapacity: true)
            return InputFrame(time: event.time, events: [event])
        default:
            // SYN_CONFIG / SYN_MT_REPORT belong to the frame (MT protocol A separates contacts with them).
            pending.append(event)
            return nil
        }
    }

    /// Forgets the unfinished frame (the device went away in the middle of it).
    public mutating func discardPending() {
        pending.removeAll(keepingCapacity: true)
    }
}
