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
/// The connection's jobs live in these places: `ClientChannelHandler` turns NIO's events into
/// calls here; this file admits, runs the idle timer and closes;
/// `ClientConnection+Reading.swift` frames the request lines and paces reads (back-pressure);
/// `ClientConnection+Writing.swift` queues messages and hands batches to the channel;
/// `RequestDispatch.swift` answers requests and runs the watch; `ClientOutbox` carries
/// messages from any thread to the event loop. The
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
    /// Set once when the client is to be dropped as a slow consumer (ClientConnection+Writing.swift).
    let dropRequested = Atomic<Bool>(false)

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
    func armIdleTimer() {
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

    func cancelIdleTimer() {
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
}
