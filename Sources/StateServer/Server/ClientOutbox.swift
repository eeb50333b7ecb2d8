import Reactive
import Synchronization

/// One client's outgoing messages on their way from any thread to its event loop.
///
/// Every message — responses and stream messages — is appended under a short lock; the event
/// loop takes the whole batch at once (`takeBatch`). A producer therefore never waits for the
/// socket: it appends and returns. The outbox holds at most `limit` bytes of stream messages:
/// one that would pass it is refused (`overLimit`) and the client is to be dropped as a slow
/// consumer. Responses are not counted against the limit and never refused: a client asks for
/// them one at a time (its reads are held while its replies are unread), and one reply may be
/// larger than the limit (`DEVICES` or `METRICS` with 1,500 devices) — refusing it dropped the
/// client and the reply was never delivered (issue #34). Bytes already handed to the channel
/// are the channel's to count (NIO's pending writes; see `ClientConnection.flush`).
///
/// Stream messages carry the watch generation they were built for; `newGeneration()` is called
/// before a `WATCH`/`UNWATCH` is answered, so a message of a replaced watch that was still in
/// flight on a pipeline thread is discarded instead of following the response.
final class ClientOutbox: Sendable {
    private struct State {
        var pending: [UInt8] = []
        /// The bytes of stream messages in `pending` (the rest are responses).
        var pendingStream = 0
        var flushScheduled = false
        var generation: UInt64 = 0
        var closed = false
        /// The event time of the oldest frame in `pending`, for the `sent` latency stage.
        var oldestFrame: Int64?
    }
    private let state = PosixLocked(State())
    private let limit: Int

    /// An outbox that refuses to hold more than `limit` bytes.
    init(limit: Int) {
        self.limit = limit
    }

    /// What `append` did.
    enum Append: Equatable {
        /// Queued; `scheduleFlush` when the outbox was empty (the caller asks for a flush).
        case queued(scheduleFlush: Bool)
        /// Dropped: the outbox is closed or the message belongs to an ended watch.
        case discarded
        /// Refused: it would pass the limit.
        case overLimit
    }

    /// Appends a message; `generation` nil for responses (never refused for their size). Any thread.
    func append(_ bytes: [UInt8], generation: UInt64?, frameTime: Int64? = nil) -> Append {
        state.withLock { o in
            if o.closed { return .discarded }
            if let generation {
                if generation != o.generation { return .discarded }
                if o.pendingStream + bytes.count > limit { return .overLimit }
                o.pendingStream += bytes.count
            }
            o.pending.append(contentsOf: bytes)
            if let frameTime, o.oldestFrame.map({ frameTime < $0 }) ?? true { o.oldestFrame = frameTime }
            if o.flushScheduled { return .queued(scheduleFlush: false) }
            o.flushScheduled = true
            return .queued(scheduleFlush: true)
        }
    }

    /// Swaps the queued batch into `batch` (which must be empty, its storage is reused for the
    /// next batch) and returns the event time of its oldest frame and the bytes of stream
    /// messages in it.
    func takeBatch(into batch: inout [UInt8]) -> (oldestFrame: Int64?, streamBytes: Int) {
        state.withLock { o in
            o.flushScheduled = false
            swap(&o.pending, &batch)
            defer {
                o.oldestFrame = nil
                o.pendingStream = 0
            }
            return (o.oldestFrame, o.pendingStream)
        }
    }

    /// The current watch generation.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Starts a new watch generation: messages built for earlier ones are discarded from now on.
    func newGeneration() {
        state.withLock { $0.generation &+= 1 }
    }

    /// Bytes queued and not yet taken by the event loop.
    var pendingByteCount: Int { state.withLock { $0.pending.count } }

    /// Discards what is queued and refuses everything from now on.
    func close() {
        state.withLock {
            $0.closed = true
            $0.pending = []
            $0.pendingStream = 0
        }
    }
}
