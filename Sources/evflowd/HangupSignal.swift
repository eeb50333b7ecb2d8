import CLinux
import DeviceIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP's one path, for the process's life (issue #35): `install()` runs first thing in
/// `main` — SIGHUP's default action would end the process (exit 129) — and from then on a
/// SIGHUP only adds one to `counter`, an `eventfd`. The reload service watches that fd on the
/// input loop (`SignalCounter.watch(on:)`); a SIGHUP that came before it was up is a count
/// already pending, taken as one reload once it is (the configuration read at start may be
/// older than the file the SIGHUP was about).
enum HangupSignal {
    /// The fd the handler writes to; -1 until installed, or if no eventfd could be made.
    private static let fd = Atomic<Int32>(-1)
    private static let installed = Mutex<SignalCounter?>(nil)

    /// The process's SIGHUP counter: nil before `install()`, or if it could not make one (then
    /// a SIGHUP is ignored, and the reload service says so).
    static var counter: SignalCounter? { installed.withLock { $0 } }

    /// Makes the counter and installs the handler (a `write(2)` to the eventfd: async-signal-safe).
    /// Once; later calls return the first counter.
    @discardableResult
    static func install() -> SignalCounter? {
        if let counter { return counter }
        let counter = try? SignalCounter()
        installed.withLock { $0 = counter }
        // Stored before the handler exists, and its lazy initialisation (swift_once) done here:
        // the handler's first access must not be it (not async-signal-safe).
        fd.store(counter?.fd ?? -1, ordering: .releasing)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            let fd = HangupSignal.fd.load(ordering: .acquiring)
            if fd >= 0 { SignalCounter.add(to: fd) }
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGHUP, &action, nil)
        return counter
    }
}

/// A count of signals in an `eventfd` (non-blocking): a signal handler's only work is adding one
/// (`add(to:)`, async-signal-safe), and a reader takes every signal since its last read at once —
/// so SIGHUPs that come while one reload runs, or before anyone watches, coalesce into one.
final class SignalCounter: Sendable {
    /// The eventfd; open for the counter's life (the process's, for `HangupSignal`'s).
    let fd: Int32

    init() throws(SystemError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw SystemError(call: "eventfd", errno: errno) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Adds one.
    func add() { Self.add(to: fd) }

    /// Adds one to the eventfd `fd`: only `write(2)`, and errno as it was (a signal handler's
    /// caller may be reading it).
    static func add(to fd: Int32) {
        let saved = errno
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
        errno = saved
    }

    /// The signals since the last take (0: none), and the count back to 0.
    func take() -> UInt64 {
        var count: UInt64 = 0
        return read(fd, &count, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size ? count : 0
    }

    /// Signals taken at once.
    struct Taken: Equatable, Sendable {
        /// How many came since the last take (≥ 1).
        var count: UInt64
        /// Pending when the watch started (a SIGHUP during start-up), not seen by the watch.
        var beforeWatch: Bool
    }

    /// One element per take: the count pending when the watch starts (`beforeWatch`), then one
    /// each time the fd becomes readable. The fd is watched by `loop` (in its epoll; no thread
    /// or dispatch source of its own) until the stream ends. Elements not yet consumed coalesce
    /// to the newest: a consumer busy with one reload gets one more, not one per signal.
    func watch(on loop: InputLoop) -> AsyncStream<Taken> {
        let (stream, continuation) = AsyncStream<Taken>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let registration = Registration()
        _ = loop.schedule { [self] in
            guard !registration.ended else { return }
            let pending = take()
            if pending > 0 { continuation.yield(Taken(count: pending, beforeWatch: true)) }
            registration.token = loop.register(fd: fd) { [self] in
                let count = take()
                if count > 0 { continuation.yield(Taken(count: count, beforeWatch: false)) }
                return .drained
            }
        }
        continuation.onTermination = { _ in
            _ = loop.schedule {
                registration.ended = true
                if let token = registration.token { loop.unregister(token, fd: self.fd) }
                registration.token = nil
            }
        }
        return stream
    }

    /// The watch's registration: touched on the loop thread only.
    private final class Registration: @unchecked Sendable {
        var token: InputLoop.Token?
        var ended = false
    }
}
