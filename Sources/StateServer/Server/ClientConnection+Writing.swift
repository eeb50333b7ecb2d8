import EvflowProtocol
import NIOCore
import Synchronization

/// Messages queued from any thread, and batches handed to the channel on the event loop.
extension ClientConnection {
    /// Queues a message (any thread); `generation` nil for responses. Returns false when it was
    /// not queued (stale watch, closed, or over the limit — the client is then being dropped).
    func enqueue(_ bytes: [UInt8], generation: UInt64?, frameTime: Int64? = nil) -> Bool {
        if dropRequested.load(ordering: .relaxed) { return false }
        switch outbox.append(bytes, generation: generation, frameTime: frameTime) {
        case .queued(let scheduleFlush):
            if scheduleFlush { core.requestFlush(self) }
            return true
        case .discarded:
            return false
        case .overLimit:
            requestDrop()
            return false
        }
    }

    /// Drops the client as a slow consumer (any thread; once).
    private func requestDrop() {
        guard !dropRequested.exchange(true, ordering: .relaxed) else { return }
        let limit = core.configuration.outgoingBufferLimit
        channel.eventLoop.execute { [weak self] in
            self?.close(.slowConsumer, "outgoing buffer over \(limit) bytes")
        }
    }

    /// Bytes handed to the channel and not yet taken by the kernel (NIO's count; event loop).
    private var channelBufferedBytes: Int {
        (try? channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
    }

    /// Bytes waiting for the kernel: in the outbox and in the channel (`buffered` in `STATS`;
    /// event loop).
    var bufferedByteCount: Int { outbox.pendingByteCount + channelBufferedBytes }

    /// Hands the queued batch to the channel (event loop). A batch that would leave more than
    /// the outgoing-buffer limit of stream messages waiting for the kernel is not written: the
    /// client is dropped. Responses do not count: a reply larger than the limit is delivered
    /// (issue #34: the client was dropped instead), and while it is unread the client's
    /// requests wait (back-pressure), so one client holds at most one such reply.
    func flush() {
        let (oldestFrame, streamBytes) = outbox.takeBatch(into: &loop.value.spare)
        let n = loop.value.spare.count
        guard n > 0, !loop.value.closed else {
            loop.value.spare.removeAll(keepingCapacity: true)
            return
        }
        // The stream bytes the kernel has not taken: at most those of the batches in flight,
        // and at most what the channel holds (exact when no reply is in flight).
        let streamWaiting = min(loop.value.streamInFlight, channelBufferedBytes)
        if streamBytes > 0, streamWaiting + streamBytes > core.configuration.outgoingBufferLimit {
            loop.value.spare.removeAll(keepingCapacity: true)
            requestDrop()
            return
        }
        var buffer = loop.value.outgoing ?? channel.allocator.buffer(capacity: max(n, 1024))
        loop.value.outgoing = nil   // `buffer` its only holder here, so `clear()` can keep the storage
        buffer.clear()
        buffer.writeBytes(loop.value.spare)
        loop.value.outgoing = buffer.capacity <= 64 * 1024 ? buffer : nil
        loop.value.spare.removeAll(keepingCapacity: loop.value.spare.capacity <= 64 * 1024)
        core.recordSent(oldestFrame: oldestFrame)
        // The batch's size waits in `inFlight`: the channel completes writes in order, so the
        // completion needs no size of its own, and a closure capturing only `self` has no
        // context to allocate (a weak capture would need one per batch). Strong is safe: the
        // channel completes every write promise, failing those still pending when it closes,
        // so the connection is held at most until its channel has closed.
        loop.value.inFlight.append((n, streamBytes))
        loop.value.streamInFlight += streamBytes
        channel.writeAndFlush(buffer).whenComplete { [self] result in written(result) }
    }

    /// The oldest batch in flight was taken by the kernel (or failed, the connection closing).
    private func written(_ result: Result<Void, Error>) {
        let batch = loop.value.inFlight.removeFirst()
        loop.value.streamInFlight -= batch.stream
        if case .success = result { core.bytesSent.add(UInt64(batch.bytes), ordering: .relaxed) }
    }
}
