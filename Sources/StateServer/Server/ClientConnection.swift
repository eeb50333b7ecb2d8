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

/// One connected client: its request handling (on its channel's event loop) and its
/// outgoing queue (filled from any thread).
///
/// Outgoing path: every message — responses and stream messages — is appended to `outbox`
/// under a short lock and `queued` (an atomic) counts its bytes until the kernel has taken
/// them (NIO's write promise). The first append to an empty outbox puts the client on the
/// server's flush list; one event-loop job drains the list and takes every client's whole
/// batch (one wake-up per burst for all clients, not one per client). A pipeline thread therefore never waits for
/// the socket: it encodes, appends and returns; when `queued` would pass the limit it
/// requests a drop instead (`slow-consumer`).
///
/// Stream messages carry the watch generation they were built for; `WATCH`/`UNWATCH` bump
/// the generation under the same lock before answering, so a message of a replaced watch
/// that was still in flight on a pipeline thread is discarded instead of following the
/// response.
final class ClientConnection: @unchecked Sendable {
    /// Server-assigned number (`client` in `STATS`).
    let number: UInt64
    let channel: Channel
    private let core: ServerCore

    // Any thread.
    private struct Outbox {
        var pending: [UInt8] = []
        var flushScheduled = false
        var generation: UInt64 = 0
        var closed = false
        /// The event time of the oldest frame in `pending`, for the `sent` latency stage.
        var oldestFrame: Int64?
    }
    private let outbox = PosixLocked(Outbox())
    let queued = Atomic<Int>(0)
    let sent = Atomic<UInt64>(0)
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

    // Event loop only.
    private var spare: [UInt8] = []
    /// The buffer of the last batch handed to the channel, reused for the next one: by then the
    /// kernel has usually taken it and the channel let it go, so `clear()` keeps its storage
    /// (when the channel still holds it, `clear()` gets fresh storage and the write in flight
    /// keeps its bytes).
    private var outgoing: ByteBuffer?
    /// The sizes of the batches handed to the channel and not yet written, oldest first.
    private var inFlight = CircularBuffer<Int>(initialCapacity: 4)
    private var framer = LineFramer()
    private var writer = MessageWriter()
    private var watch: Disposable?
    private var idleTask: Scheduled<Void>?
    private var accepted = false
    private var closed = false
    private var heardFrom = false
    /// A request is being answered asynchronously (`LATENCY`): later lines wait in the framer,
    /// so responses stay in request order.
    private var answering = false
    /// Whether this client sees key codes: decided at admission (`KeyAccess`), hidden until then.
    private var keys = KeyVisibility.hidden

    init(number: UInt64, channel: Channel, core: ServerCore) {
        self.number = number
        self.channel = channel
        self.core = core
        writer = MessageWriter(names: core.names)
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
        idleTask?.cancel()
        let config = core.configuration
        let timeout = heardFrom ? config.idleTimeoutAfterRequest : config.idleTimeout
        let nanos = RxTimeInterval(clamping: timeout).nanoseconds   // a huge timeout saturates, never traps
        let message = heardFrom ? "no request for \(timeout) while not watching" : "no request within \(timeout) of connecting"
        idleTask = channel.eventLoop.scheduleTask(in: .nanoseconds(nanos)) { [weak self] in
            self?.close(.idle, message)
        }
    }

    private func admit(_ credentials: PeerCredentials?) {
        guard !closed else { return }
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
        accepted = true
        keys = core.keyAccess.visibility(for: credentials)
        respond { $0.appendVersion(release: core.configuration.release, keys: keys) }
        processLines()
    }

    /// The connection is gone (either side closed it).
    func inactive() {
        closed = true
        idleTask?.cancel()
        idleTask = nil
        endWatch()
        outbox.withLock {
            $0.closed = true
            $0.pending = []
        }
        spare = []
        outgoing = nil
        if accepted { core.unregister(self) }
    }

    /// Closes the connection after a best-effort `CLOSE` (written only if the socket takes it now).
    func close(_ reason: CloseReason, _ message: String) {
        guard !closed else { return }
        closed = true
        idleTask?.cancel()
        idleTask = nil
        endWatch()
        outbox.withLock {
            $0.closed = true
            $0.pending = []
        }
        core.recordClose(reason, client: number, message: message)
        var w = MessageWriter(names: core.names, capacity: 256)
        w.appendClose(reason: reason, message: message)
        channel.writeAndFlush(channel.allocator.buffer(bytes: w.bytes), promise: nil)
        channel.close(promise: nil)
    }

    // MARK: - Requests (event loop)

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !closed else { return }
        framer.append(bytes)
        if accepted { processLines() }
    }

    private func processLines() {
        var spoke = false
        defer {
            // Watchers may stay silent for ever; anyone else gets the idle limit again.
            if spoke && !closed {
                if watch == nil { armIdleTimer() } else { idleTask?.cancel(); idleTask = nil }
            }
        }
        while !closed, !answering, let item = framer.next() {
            switch item {
            case .overlong:
                heard()
                spoke = true
                respond { $0.appendError(ProtocolError(.lineTooLong(limit: ProtocolConstants.maxRequestLineLength))) }
            case .line(let line):
                if Request.isBlank(line) { continue }
                heard()
                spoke = true
                do {
                    let request = try Request.parse(line)
                    handle(request)
                } catch {
                    respond { $0.appendError(error) }
                }
            }
        }
    }

    /// Answers from the hub's frame ages, which live on its scheduler: asks there, then builds
    /// the response on the event loop (adding `sent`, kept here). Until then later request lines
    /// wait in the framer, so responses stay in request order.
    private func withLatency(_ response: @escaping @Sendable (LatencyReport) -> (inout MessageWriter) -> Void) {
        answering = true
        let loop = channel.eventLoop
        core.latencyReport { [weak self] report in
            loop.execute {
                guard let self else { return }
                self.answering = false
                guard !self.closed else { return }
                var report = report
                report.total[.sent] = self.core.sentSummary
                self.respond(response(report))
                self.processLines()
            }
        }
    }

    private func heard() {
        heardFrom = true
    }

    private func handle(_ request: Request) {
        let tag = request.tag
        switch request.kind {
        case .devices:
            let devices = core.hub.devices
            respond { $0.appendDevices(devices, tag: tag) }
        case .state(let device):
            switch core.stateReport(for: device) {
            case .success(let report):
                let shown = keys == .visible ? report : KeyPrivacy.redacted(report)
                respond { $0.appendState(shown, tag: tag) }
            case .failure(let error): respond { $0.appendError(ProtocolError(error.kind, requestClass: "STATE", tag: tag)) }
            }
        case .stats:
            let stats = keys == .visible ? core.stats() : KeyPrivacy.redacted(core.stats())
            respond { $0.appendStats(stats, tag: tag) }
        case .ping:
            let now = monotonicNow()
            respond { $0.appendPing(now: now, tag: tag) }
        case .metrics:
            withLatency { [core] report in
                let text = core.metricsText(latency: report)
                return { $0.appendMetrics(text, tag: tag) }
            }
        case .latency:
            withLatency { report in { $0.appendLatency(report, tag: tag) } }
        case .unwatch:
            endWatch()
            respond { $0.appendUnwatch(tag: tag) }
        case .watch(let watchRequest):
            startWatch(watchRequest, tag: tag)
        }
    }

    private func startWatch(_ request: WatchRequest, tag: RequestTag?) {
        // Refused like a bad request: the old watch, if any, stays in force.
        if let refusal = KeyAccess.refusal(of: request, keys: keys, tag: tag) {
            respond { $0.appendError(refusal) }
            return
        }
        endWatch()
        let generation = outbox.withLock { $0.generation }
        let listed = core.hub.devices.filter(request.selects)
        let matched = listed.map(\.id)
        meta.withLock {
            $0.tag = tag
            $0.stream = request.stream
        }
        // The response is queued first and flushed after subscribing: the client sees it
        // before any stream message, and everything that happens after it is streamed.
        respond(flush: false) { $0.appendWatch(request, matched: matched, tag: tag) }
        defer { flush() }
        let frames = core.frameEncoders.encoder(for: WatchShape(stream: request.stream, selection: request.events, keys: keys))
        let encoder = WatchEncoder(client: self, names: core.names, frames: frames, generation: generation)
        let stream = WatchStream.make(hub: core.hub, watch: request, listed: listed, onRateDrop: { [weak self] in
            self?.rateDropped.add(1, ordering: .relaxed)
        })
        watch = stream.subscribe(
            onNext: { encoder.encode($0) },
            onError: { [weak self] error in
                self?.core.logger.warning("watch stream failed", metadata: ["client": "\(self?.number ?? 0)", "error": "\(error)"])
            })
        core.watchersChanged()
    }

    /// Ends the current watch: nothing of it is sent after this returns.
    private func endWatch() {
        outbox.withLock { $0.generation &+= 1 }
        if let watch {
            self.watch = nil
            watch.dispose()
            meta.withLock {
                $0.tag = nil
                $0.stream = nil
            }
            core.watchersChanged()
        }
    }

    var isWatching: Bool { meta.withLock { $0.stream != nil } }

    /// Encodes one response with the connection's writer and sends it (event loop).
    private func respond(flush: Bool = true, _ body: (inout MessageWriter) -> Void) {
        writer.reset()
        body(&writer)
        _ = enqueue(writer.bytes, generation: nil)
        if flush { self.flush() }
    }

    // MARK: - Outgoing (any thread)

    /// Queues a message; `generation` nil for responses. Returns false when it was not queued
    /// (stale watch, closed, or over the limit — the client is then being dropped).
    func enqueue(_ bytes: [UInt8], generation: UInt64?, frameTime: Int64? = nil) -> Bool {
        if dropRequested.load(ordering: .relaxed) { return false }
        let n = bytes.count
        let total = queued.add(n, ordering: .relaxed).newValue
        if total > core.configuration.outgoingBufferLimit {
            queued.subtract(n, ordering: .relaxed)
            requestDrop()
            return false
        }
        let schedule: Bool? = outbox.withLock { o in
            if o.closed { return nil }
            if let generation, generation != o.generation { return nil }
            o.pending.append(contentsOf: bytes)
            if let frameTime, o.oldestFrame.map({ frameTime < $0 }) ?? true { o.oldestFrame = frameTime }
            if o.flushScheduled { return false }
            o.flushScheduled = true
            return true
        }
        guard let schedule else {
            queued.subtract(n, ordering: .relaxed)
            return false
        }
        if schedule { core.requestFlush(self) }
        return true
    }

    private func requestDrop() {
        guard !dropRequested.exchange(true, ordering: .relaxed) else { return }
        let limit = core.configuration.outgoingBufferLimit
        channel.eventLoop.execute { [weak self] in
            self?.close(.slowConsumer, "outgoing buffer over \(limit) bytes")
        }
    }

    /// Hands the queued batch to the channel (event loop).
    func flush() {
        let oldestFrame = outbox.withLock { o -> Int64? in
            o.flushScheduled = false
            swap(&o.pending, &spare)
            defer { o.oldestFrame = nil }
            return o.oldestFrame
        }
        guard !spare.isEmpty, !closed else {
            spare.removeAll(keepingCapacity: true)
            return
        }
        let n = spare.count
        var buffer = outgoing ?? channel.allocator.buffer(capacity: max(n, 1024))
        outgoing = nil   // `buffer` its only holder here, so `clear()` can keep the storage
        buffer.clear()
        buffer.writeBytes(spare)
        outgoing = buffer.capacity <= 64 * 1024 ? buffer : nil
        spare.removeAll(keepingCapacity: spare.capacity <= 64 * 1024)
        core.recordSent(oldestFrame: oldestFrame)
        // The batch's size waits in `inFlight`: the channel completes writes in order, so the
        // completion needs no size of its own, and a closure capturing only `self` has no
        // context to allocate (a weak capture would need one per batch). Strong is safe: the
        // channel completes every write promise, failing those still pending when it closes,
        // so the connection is held at most until its channel has closed.
        inFlight.append(n)
        channel.writeAndFlush(buffer).whenComplete { [self] result in written(result) }
    }

    /// The oldest batch in flight was taken by the kernel (or failed, the connection closing).
    private func written(_ result: Result<Void, Error>) {
        let n = inFlight.removeFirst()
        queued.subtract(n, ordering: .relaxed)
        if case .success = result { core.bytesSent.add(UInt64(n), ordering: .relaxed) }
    }
}

/// Encodes a watch's items; called serially by the watch subscription (a pipeline thread).
/// Frames are encoded by the shape's shared encoder (once for every client of the shape),
/// device notices here.
final class WatchEncoder: @unchecked Sendable {
    private weak var client: ClientConnection?
    private var writer: MessageWriter
    private let frames: SharedFrameEncoder
    private let generation: UInt64

    init(client: ClientConnection, names: EventNameCache, frames: SharedFrameEncoder, generation: UInt64) {
        self.client = client
        writer = MessageWriter(names: names, capacity: 256)
        self.frames = frames
        self.generation = generation
    }

    func encode(_ item: WatchItem) {
        guard let client else { return }
        let queued: Bool
        switch item {
        case .frame(let id, let frame):
            guard let bytes = frames.encode(device: id, frame: frame) else { return }
            queued = client.enqueue(bytes, generation: generation, frameTime: frame.time)
        case .notice(let change):
            writer.reset()
            writer.appendDeviceNotice(change)
            queued = client.enqueue(writer.bytes, generation: generation)
        }
        if queued { client.sent.add(1, ordering: .relaxed) }
    }
}
