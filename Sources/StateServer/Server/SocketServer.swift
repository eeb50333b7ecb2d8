#if canImport(Glibc)
import Glibc
#endif
import EvflowProtocol
import Logging
import NIOCore
import NIOPosix
import Pipeline
import Reactive
import Synchronization

/// Errors from starting the server.
public enum StateServerError: Error, CustomStringConvertible, Sendable {
    /// Another process already serves on the socket path.
    case socketInUse(String)
    /// The socket file could not be given its mode or group.
    case socketSetup(String, errno: Int32)
    /// `socketGroup` names no group.
    case unknownGroup(String)
    /// `start()` was called twice.
    case alreadyStarted
    /// The socket path does not fit in a `sockaddr_un`.
    case socketPathTooLong(String, limit: Int)
    /// Something other than a socket is at the socket path (it is left alone).
    case notASocket(String)

    public var description: String {
        switch self {
        case .socketInUse(let p): return "another server is listening on \(p)"
        case .socketSetup(let what, let e): return "\(what): \(String(cString: strerror(e)))"
        case .unknownGroup(let g): return "unknown group '\(g)'"
        case .alreadyStarted: return "the state server is already started"
        case .socketPathTooLong(let p, let limit):
            return "socket path \(p) is \(p.utf8.count) bytes long; a Unix socket path holds at most \(limit)"
        case .notASocket(let p): return "\(p) exists and is not a socket; not replacing it"
        }
    }
}

/// The state server: JSON lines over a Unix stream socket (docs/protocol.md), on swift-nio.
///
/// One event loop thread serves every client: requests are answered from lock-free store
/// snapshots, and stream messages are encoded on the pipeline's threads and handed to the
/// loop in batches (see `ClientConnection` and `ClientOutbox`), so neither the pipeline nor other clients ever
/// wait for one client's socket — at most for its outbox mutex, held only to append or swap
/// a batch.
public final class StateServer: Sendable {
    private let core: ServerCore
    private let group: MultiThreadedEventLoopGroup
    /// Whether the server made `group` (and shuts it down) or was given it (and leaves it running).
    private let ownsGroup: Bool
    /// The group's loop that serves every client (one thread, whatever the group's size).
    private let eventLoop: any EventLoop
    private let listener = PosixLocked<Channel?>(nil)
    private let state = PosixLocked<(started: Bool, stopped: Bool)>((false, false))

    /// A server for `hub`'s devices; nothing happens until `start()`. `sourceStatistics`
    /// gives the live source's counters to `METRICS` (called per scrape, from the server's thread).
    /// It serves on one event loop of `eventLoopGroup` (evflowd passes the process's one group,
    /// which also runs Swift concurrency, and which the server then leaves running at
    /// `shutdown()`), or of a one-thread group of its own when nil.
    public convenience init(configuration: StateServerConfiguration, hub: DeviceHub, logger: Logger,
                            eventLoopGroup: MultiThreadedEventLoopGroup? = nil,
                            sourceStatistics: (@Sendable () -> SourceStatistics)? = nil) {
        self.init(configuration: configuration, hub: hub, logger: logger, trustRootAndSelf: true,
                  eventLoopGroup: eventLoopGroup, sourceStatistics: sourceStatistics)
    }

    /// For tests: a server that does not wave root and its own uid through the access lists,
    /// and whose idle limits and slow-consumer grace may run on a clock the test advances.
    init(configuration: StateServerConfiguration, hub: DeviceHub, logger: Logger, trustRootAndSelf: Bool,
         eventLoopGroup: MultiThreadedEventLoopGroup? = nil, timers: any ServerTimers = EventLoopTimers(),
         sourceStatistics: (@Sendable () -> SourceStatistics)? = nil) {
        ownsGroup = eventLoopGroup == nil
        group = eventLoopGroup ?? MultiThreadedEventLoopGroup(numberOfThreads: 1)
        eventLoop = group.next()
        core = ServerCore(configuration: configuration, hub: hub, logger: logger, trustRootAndSelf: trustRootAndSelf,
                          eventLoop: eventLoop, timers: timers, sourceStatistics: sourceStatistics)
    }

    /// Clients connected and accepted now.
    public var clientCount: Int { core.clientCount.load(ordering: .relaxed) }

    /// The client count each time a client is accepted or goes, on the server's event loop.
    public var clientCountChanges: Observable<Int> { core.clientCountChanges.asObservable() }

    /// Returns once a job has run on the server's event loop: proof that it is not stuck
    /// (the watchdog pings only after this and a round trip through the input thread).
    public func roundTrip() async throws {
        try await eventLoop.submit {}.get()
    }

    /// Clients dropped because they could not keep up (`slow-consumer`).
    public var droppedClients: Int { core.droppedClients.load(ordering: .relaxed) }

    /// The shared `FRAME` encoders of the watches in progress, per shape (tests).
    var frameEncoders: [WatchShape: SharedFrameEncoder] { core.frameEncoders.inUse }

    /// Binds the socket (or adopts `listenFD`) and listens; returns once listening.
    public func start() async throws {
        try state.withLock { s in
            if s.started { throw StateServerError.alreadyStarted }
            s.started = true
        }
        let core = self.core
        let config = core.configuration
        // What the clients' sessions build is counted in the starter's LiveResources scope
        // (a test's own; none in the daemon).
        let scope = LiveResources.scope
        let bootstrap = ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.maxMessagesPerRead, value: UInt(ClientConnection.maxMessagesPerRead))
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(
                minimum: 64, initial: 2048, maximum: ClientConnection.maxReadSize))
            // Requests wait while more than this is unwritten (see ClientConnection, back-pressure).
            .childChannelOption(.writeBufferWaterMark, value: Self.waterMark(limit: config.outgoingBufferLimit))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let client = ClientConnection(number: core.makeNumber(), channel: channel, core: core)
                    try channel.pipeline.syncOperations.addHandler(ClientChannelHandler(client: client, scope: scope))
                }
            }
        let channel: Channel
        if let fd = config.listenFD {
            channel = try await bootstrap.withBoundSocket(fd).get()
        } else {
            if Self.someoneListens(on: config.socketPath) { throw StateServerError.socketInUse(config.socketPath) }
            // Bound here, not by NIO, so that the file has its final mode from the start.
            let fd = try ListeningSocket.make(path: config.socketPath, mode: config.socketMode,
                                              group: config.socketGroup, backlog: 256)
            do {
                channel = try await bootstrap.withBoundSocket(fd).get()
            } catch {
                unlink(config.socketPath)
                throw error
            }
        }
        listener.withLock { $0 = channel }
        core.logger.info("state server listening", metadata: [
            "socket": "\(config.listenFD.map { "fd \($0)" } ?? config.socketPath)"])
    }

    /// Closes every client (`CLOSE shutdown`) and the listener, and removes the socket file
    /// (not an adopted one). Waits until every client's subscriptions are released and its
    /// channel is closed — at once for a slow consumer still in its grace (its channel used to
    /// close only when the 10-s grace ran out, and SIGTERM waited for it).
    public func shutdown() async {
        let first = state.withLock { s -> Bool in
            if s.stopped { return false }
            s.stopped = true
            return true
        }
        guard first else { return }
        let channel = listener.withLock { c -> Channel? in
            defer { c = nil }
            return c
        }
        if let channel { try? await channel.close().get() }
        let clients = core.clients
        var closed: [EventLoopFuture<Void>] = []
        for client in clients {
            let ch = client.channel
            ch.eventLoop.execute { client.closeForShutdown() }
            closed.append(ch.closeFuture)
        }
        for f in closed { try? await f.get() }
        if core.configuration.listenFD == nil, channel != nil { unlink(core.configuration.socketPath) }
        if ownsGroup { try? await group.shutdownGracefully() }
    }

    /// A client's requests wait while its channel holds more than `high` unwritten bytes, until
    /// it is below `low`: at most half the outgoing-buffer limit (which drops the client), and at
    /// most 64 KiB, so a client that reads its replies is paced, not dropped.
    static func waterMark(limit: Int) -> ChannelOptions.Types.WriteBufferWaterMark {
        let high = max(2, min(64 * 1024, limit / 2))
        return .init(low: high / 2, high: high)
    }

    /// Whether a server answers on `path` (then we must not unlink its socket).
    static func someoneListens(on path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { p in
            for (i, b) in bytes.enumerated() { p[i] = b }
        }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return r == 0
    }
}
