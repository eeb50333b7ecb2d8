import EvflowProtocol
import InputModel
import Reactive

/// What decides a `FRAME` message's bytes besides the frame: every client watching with the
/// same stream, the same event selection and the same key visibility gets the same bytes for a
/// device's frame (key codes are hidden in the encode itself, so once per frame per shape).
struct WatchShape: Hashable, Sendable {
    let stream: StreamKind
    let selection: EventSelection
    let keys: KeyVisibility
}

/// Encodes `FRAME` messages once per frame for all the watchers of one shape.
///
/// A device's frame reaches its watchers one after the other, on the thread that sends it: the
/// first watcher of a shape encodes it, the others get the same bytes. The encoder remembers
/// only the last frame (device and selected frame); the bytes are a function of exactly those
/// and the shape, so a different frame in between only costs an encode, never wrong bytes.
///
/// Any thread: the last frame is kept under a lock held for the compare and, on a miss, the
/// encode (no call out). The bytes are returned as the writer's array; while the caller holds
/// them the next encode copies instead of reusing the buffer, so a caller on another thread
/// never sees them change. On the hub's one delivering thread nobody holds them by then, and
/// an encode allocates nothing.
final class SharedFrameEncoder: Sendable {
    let shape: WatchShape

    private struct Last {
        var writer: MessageWriter
        var device: DeviceID?
        var frame: InputFrame?
        /// Encodes made, and encodes saved (answered from the last frame), for the tests.
        var encodes = 0
        var reuses = 0
    }
    private let last: PosixLocked<Last>

    init(shape: WatchShape, names: EventNameCache) {
        self.shape = shape
        last = PosixLocked(Last(writer: MessageWriter(names: names, capacity: 1024)))
    }

    /// The `FRAME` message for `frame` (already reduced to the shape's selection) of `device`;
    /// nil when it has no event to send.
    func encode(device: DeviceID, frame: InputFrame) -> [UInt8]? {
        last.withLock { last in
            if last.frame == frame, last.device == device {
                last.reuses += 1
            } else {
                last.writer.reset()
                last.device = device
                last.frame = frame
                last.encodes += 1
                // An empty writer stands for "nothing to send" (appendFrame wrote nothing).
                _ = last.writer.appendFrame(device: device, stream: shape.stream, frame: frame, keys: shape.keys)
            }
            return last.writer.bytes.isEmpty ? nil : last.writer.bytes
        }
    }

    /// Encodes made and encodes answered from the last frame, since this encoder was made.
    var counts: (encodes: Int, reuses: Int) { last.withLock { ($0.encodes, $0.reuses) } }
}

/// The shared encoders of the watches in progress, one per shape.
///
/// Each watch holds its shape's encoder for as long as it lasts; the table holds them weakly,
/// so a shape nobody watches any more costs nothing (its entry is dropped at the next look-up).
final class SharedFrameEncoders: Sendable {
    private struct Entry {
        weak var encoder: SharedFrameEncoder?
    }
    private let table = PosixLocked<[WatchShape: Entry]>([:])
    private let names: EventNameCache

    init(names: EventNameCache) {
        self.names = names
    }

    /// The encoder of `shape`, made when no watch of that shape is in progress.
    func encoder(for shape: WatchShape) -> SharedFrameEncoder {
        table.withLock { table in
            table = table.filter { $0.value.encoder != nil }
            if let encoder = table[shape]?.encoder { return encoder }
            let encoder = SharedFrameEncoder(shape: shape, names: names)
            table[shape] = Entry(encoder: encoder)
            return encoder
        }
    }

    /// The encoders of the shapes with at least one watch in progress.
    var inUse: [WatchShape: SharedFrameEncoder] {
        table.withLock { $0.compactMapValues(\.encoder) }
    }
}
