#if canImport(Glibc)
import Glibc
#endif
import EvflowProtocol
import InputModel
import Logging
import NIOCore
import Pipeline
import Reactive
import Synchronization

/// One connected client's life cycle on its channel's event loop: admission, the idle timer,
/// request framing, closing, and handing its outbox to the channel.
///
/// The connection's jobs live in four places: `ClientChannelHandler` turns NIO's events into
/// calls here; this type admits, frames and closes; `RequestDispatch.swift` answers requests
/// and runs the watch; `ClientOutbox` carries messages from any thread to the event loop. The
/// first append to an empty outbox puts the client on the server's flush list; one event-loop
/// job drains the list and takes every client's whole batch (one wake-up per burst for all
/// clients, not one per client).
///
/// State that only the event loop may touch is in `loop` (an `NIOLoopBoundBox`, so the rule
/// is checked on each use); what other threads read is the outbox, the atomics and `meta`.
final class ClientConnection: Sendable {
    /// Server-assigned number (`client` in `STATS`).
    let number: UInt64
    let channel: Channel
    let core: ServerCore
    let outbox: ClientOutbox
    /// Stream messages queued for the client (`sent` in `STATS`).
    let sent = Atomic<UInt64>(0)
    /// Frames the client's `max_rate` dropped (`dropped` in `STATS`).
    let rateDropped = Atomic<UInt64>(0)
    private let dropRequested = Atomic<Bool>(false)

    /// What `STATS` shows about the client; written on the event loop.
    struct Meta: Sendable {
        var pid: Int32?
        var uid: UInt32?
        var tag: RequestTag?
        var stream: StreamKind?
    }
    let meta = PosixLocked(Meta())

    /// The connection's event-loop state.
    struct LoopState {
        /// The batch taken from the outbox; its storage is swapped back in for the next one.
        var spare: [UInt8] = []
        /// The buffer of the last batch handed to the channel, reused for the next one: by then
        /// the kernel has usually taken it and the channel let it go, so `clear()` keeps its
        /// storage (when the channel still holds it, `clear()` gets fresh storage and the write
        /// in flight keeps its bytes).
        var outgoing: ByteBuffer?
        /// The sizes of the batches handed to the channel and not yet written, oldest first
        /// (for `bytesSent`, which counts what the kernel took), with the bytes of stream
        /// messages in each.
        var inFlight = CircularBuffer<(bytes: Int, stream: Int)>(initialCapacity: 4)
        /// The sum of `inFlight`'s stream bytes.
        var streamInFlight = 0
        var framer = LineFramer()
        var writer: MessageWriter
        var watch: Disposable?
        var idleTask: ServerTimer?
        var accepted = false
        var closed = false
        var heardFrom = false
        /// A request is being answered asynchronously (`LATENCY`): later lines wait in the
        /// framer, so responses stay in request order.
        var answering = false
        /// The channel holds more than its high water mark of unwritten bytes: requests wait
        /// until it is below the low one.
        var writable = true
        /// A read was held back (`ClientChannelHandler.read`) and is owed once input is taken.
        var readHeld = false
        /// `processLines` is running (a writability change inside a flush must not re-enter it).
        var processing = false
        /// `processLines` stopped at its per-turn budget and runs again as an event-loop job.
        var continuationScheduled = false
        /// Whether this client sees key codes: decided at admission (`KeyAccess`), hidden until then.
        var keys = KeyVisibility.hidden
    }
    let loop: NIOLoopBoundBox<LoopState>

    init(number: UInt64, channel: Channel, core: ServerCore) {
        self.number = number
        self.channel = channel
        self.core = core
        outbox = ClientOutbox(limit: core.configuration.outgoingBufferLimit)
        loop = .makeBoxSendingValue(LoopState(writer: MessageWriter(names: core.names)), eventLoop: channel.eventLoop)
    }

    // MARK: - Life cycle (event loop)

    /// The connection is up: check the peer, the client limits, greet, start the idle timer.
    func activate() {
        armIdleTimer()
        PeerCredentials.read(from: channel).whenComplete { [self] result in
            admit(try? result.get())
        }
    }

    /// (Re)starts the idle timer: `idleTimeout` until the first request line, then
    /// `idleTimeoutAfterRequest` after each request line while the client is not watching.
    private func armIdleTimer() {
        loop.value.idleTask?.cancel()
        let config = core.configuration
        let heardFrom = loop.value.heardFrom
        let timeout = heardFrom ? config.idleTimeoutAfterRequest : config.idleTimeout
        let nanos = RxTimeInterval(clamping: timeout).nanoseconds   // a huge timeout saturates, never traps
        let message = heardFrom ? "no request for \(timeout) while not watching" : "no request within \(timeout) of connecting"
        loop.value.idleTask = core.timers.schedule(in: .nanoseconds(nanos), on: channel.eventLoop) { [weak self] in
            self?.close(.idle, message)
        }
    }

    private func cancelIdleTimer() {
        loop.value.idleTask?.cancel()
        loop.value.idleTask = nil
    }

    private func admit(_ credentials: PeerCredentials?) {
        guard !loop.value.closed else { return }
        meta.withLock {
            $0.pid = credentials?.pid
            $0.uid = credentials?.uid
        }
        guard core.permits(credentials) else {
            close(.notPermitted, credentials.map { "uid \($0.uid) is not allowed" } ?? "peer credentials unavailable")
            return
        }
        switch core.register(self, uid: credentials?.uid) {
        case .accepted:
            break
        case .serverFull:
            close(.tooManyClients, "at most \(core.configuration.maxClients) clients")
            return
        case .userFull:
            close(.tooManyClients, "at most \(core.configuration.maxClientsPerUser) clients per user")
            return
        }
        loop.value.accepted = true
        let keys = core.keyAccess.visibility(for: credentials)
        loop.value.keys = keys
        respond { $0.appendVersion(release: core.configuration.release, keys: keys) }
        processLines()
    }

    /// The connection is gone (either side closed it).
    func inactive() {
        let wasClosed = loop.value.closed
        loop.value.closed = true
        if !wasClosed { release() }
        loop.value.spare = []
        loop.value.outgoing = nil
        loop.value.framer = LineFramer()
        if loop.value.accepted { core.unregister(self) }
    }

    /// Stops the idle timer, the watch and the outbox: nothing more is queued.
    private func release() {
        cancelIdleTimer()
        endWatch()
        outbox.close()
    }

    /// How long a slow consumer has to read what was queued for it and its `CLOSE`.
    static let slowConsumerGrace: TimeAmount = .seconds(10)

    /// Closes the connection after a `CLOSE`. For a slow consumer, the `CLOSE` follows the
    /// bytes already handed to the channel (at most the outgoing-buffer limit; nothing more is
    /// queued) and the connection is closed once the client has read up to it, or after
    /// `slowConsumerGrace`, or at shutdown; for any other reason at once (the `CLOSE` is
    /// written if the socket takes it now).
    func close(_ reason: CloseReason, _ message: String) {
        guard !loop.value.closed else { return }
        loop.value.closed = true
        release()
        core.recordClose(reason, client: number, message: message)
        var w = MessageWriter(names: core.names, capacity: 256)
        w.appendClose(reason: reason, message: message)
        let written = channel.writeAndFlush(channel.allocator.buffer(bytes: w.bytes))
        guard reason == .slowConsumer else {
            channel.close(promise: nil)
            return
        }
        let channel = self.channel
        let grace = core.timers.schedule(in: Self.slowConsumerGrace, on: channel.eventLoop) { channel.close(promise: nil) }
        written.whenComplete { _ in
            grace.cancel()
            channel.close(promise: nil)
        }
    }

    /// Closes the connection because the server stops: `CLOSE shutdown`, or, for a client
    /// already closed that is still being given its grace (a slow consumer), the channel now —
    /// shutdown does not wait for a client that does not read.
    func closeForShutdown() {
        guard loop.value.closed else { return close(.shutdown, "evflowd is stopping") }
        channel.close(promise: nil)
    }

    // MARK: - Requests (event loop)

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !loop.value.closed else { return }
        loop.value.framer.append(bytes)
        if loop.value.accepted { processLines() }
    }

    // MARK: - Back-pressure (event loop)
    //
    // What one client can make the server hold is bounded: requests are taken from the channel
    // only while the connection is admitted, no answer is pending (`LATENCY`, `METRICS`), every
    // line already received is answered, and its replies are being written (the channel is
    // writable). Otherwise the read is held, so the client's requests wait in the kernel's socket
    // buffers and its `send` blocks. Held at most: one read cycle (`maxMessagesPerRead` reads of
    // at most `maxReadSize` bytes) of request lines, an unfinished line (the line limit), the
    // replies answered before the channel went over its high water mark (the last of them of
    // any size: a reply is delivered whole, however large), and stream messages up to the
    // outgoing-buffer limit (then the client is dropped as a slow consumer).

    /// Largest buffer one read of a client's socket fills: request lines are at most 4 KiB.
    static let maxReadSize = 16 * 1024
    /// Reads per read cycle.
    static let maxMessagesPerRead = 4

    /// Whether the connection takes more request bytes now.
    var acceptsInput: Bool {
        loop.value.accepted && !loop.value.closed && !loop.value.answering && loop.value.writable
            && !loop.value.framer.hasItems
    }

    /// The channel's read was held back (`ClientChannelHandler.read`).
    func holdRead() {
        loop.value.readHeld = true
    }

    /// Asks the channel for the read held back, if one was and input is taken again.
    private func resumeReading() {
        guard loop.value.readHeld, acceptsInput else { return }
        loop.value.readHeld = false
        channel.read()
    }

    /// The channel went above its high water mark of unwritten bytes (false) or back below the
    /// low one (true): requests wait meanwhile.
    func writabilityChanged(_ writable: Bool) {
        loop.value.writable = writable
        if writable { processLines() }
    }

    /// Request lines one client has answered per event-loop turn. Beyond it the rest wait for a
    /// job of their own, after every other channel's I/O of this turn: a client pipelining
    /// thousands of requests delays another client's answer by one budget per busy client, not
    /// by its whole backlog (scripts/check-abuse: 10 such clients, a PING answered within
    /// 100 ms).
    static let requestsPerTurn = 32

    /// Answers the complete request lines received, in order, until one is answered
    /// asynchronously, the replies are not being taken, or the turn's budget is spent; then
    /// reads again if it may. Each reply is handed to the channel as it is made, so the
    /// channel's writability stops the loop as soon as the client stops taking them.
    func processLines() {
        guard !loop.value.processing else { return }
        loop.value.processing = true
        var spoke = false
        var answered = 0
        defer {
            loop.value.processing = false
            // Watchers may stay silent for ever; anyone else gets the idle limit again.
            if spoke && !loop.value.closed {
                if loop.value.watch == nil { armIdleTimer() } else { cancelIdleTimer() }
            }
            if answered == Self.requestsPerTurn { continueNextTurn() }
            resumeReading()
        }
        while !loop.value.closed, !loop.value.answering, loop.value.writable, answered < Self.requestsPerTurn,
              let item = loop.value.framer.next() {
            switch item {
            case .overlong:
                loop.value.heardFrom = true
                spoke = true
                answered += 1
                respond { $0.appendError(ProtocolError(.lineTooLong(limit: ProtocolConstants.maxRequestLineLength))) }
            case .line(let line):
                if Request.isBlank(line) { continue }
                loop.value.heardFrom = true
                spoke = true
                answered += 1
                do {
                    let request = try Request.parse(line)
                    handle(request)
                } catch {
                    respond { $0.appendError(error) }
                }
            }
        }
    }

    /// Runs `processLines` again as a job of its own when lines are left (once at a time).
    private func continueNextTurn() {
        guard loop.value.framer.hasItems, !loop.value.closed, !loop.value.continuationScheduled else { return }
        loop.value.continuationScheduled = true
        channel.eventLoop.execute { [weak self] in
            guard let self else { return }
            self.loop.value.continuationScheduled = false
            self.processLines()
        }
    }

    /// Encodes one response with the connection's writer and sends it (event loop).
    func respond(flush: Bool = true, _ body: (inout MessageWriter) -> Void) {
        loop.value.writer.reset()
        body(&loop.value.writer)
        _ = enqueue(loop.value.writer.bytes, generation: nil)
        if flush { self.flush() }
    }

    // MARK: - Outgoing

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
