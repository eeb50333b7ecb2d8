import EvflowProtocol
import Foundation
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a connection to evflowd's socket reports.
public enum DaemonEvent: @unchecked Sendable {
    /// Connected and greeted; requests can be sent on the connection.
    case connected(DaemonConnection, release: String, keys: KeyVisibility)
    /// A message from evflowd (responses, `FRAME`, `DEVICE`, `ERROR`).
    case message(ServerMessage)
}

/// Why a connection to evflowd ended.
public struct DaemonLinkError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One connection to evflowd's socket: `send` may be called from any thread.
public final class DaemonConnection: @unchecked Sendable {
    private let lock = Mutex<Int32>(-1)   // the fd, -1 once closed

    init(fd: Int32) { lock.withLock { $0 = fd } }

    /// Sends a request without blocking; false if the connection is gone or full.
    @discardableResult
    public func send(_ request: Request) -> Bool {
        let data = request.encoded()
        return lock.withLock { fd -> Bool in
            guard fd >= 0 else { return false }
            var off = 0
            while off < data.count {
                let n = data[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                off += n
            }
            return true
        }
    }

    /// Wakes the reader (it sees EOF) without closing the descriptor.
    func shutdown() { lock.withLock { fd in if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) } } }

    /// Closes the descriptor; later `send`s fail.
    func close() {
        lock.withLock { fd in
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
    }

    func withFD<R>(_ body: (Int32) -> R) -> R { lock.withLock { body($0) } }
}

/// evflowd's socket as a cold observable: each subscription connects, reads the greeting,
/// emits `.connected`, then every message, on a reader thread of its own. EOF, a `CLOSE`, a
/// refused connection or an undecodable line end it with a `DaemonLinkError`; disposal shuts the
/// socket down and the reader thread closes it and exits. Wrap it in `retry(when:)` to reconnect.
public func daemonLink(socketPath: String) -> Observable<DaemonEvent> {
    Observable.create { observer in
        let state = ReaderState()
        let thread = Thread {
            runDaemonReader(socketPath: socketPath, observer: observer, state: state)
        }
        thread.name = "evflow-mqtt daemon reader"
        thread.start()
        return Disposables.create {
            state.cancelled.store(true, ordering: .releasing)
            state.connection.withLock { $0?.shutdown() }
        }
    }
}

/// Shared by a reader thread and its subscription's disposal.
private final class ReaderState: Sendable {
    let cancelled = Atomic<Bool>(false)
    let connection = Mutex<DaemonConnection?>(nil)
}

private func runDaemonReader(socketPath: String, observer: AnyObserver<DaemonEvent>, state: ReaderState) {
    let cancelled = { state.cancelled.load(ordering: .acquiring) }
    func fail(_ message: String) { observer.on(.error(DaemonLinkError(message))) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return fail("cannot create a socket: \(String(cString: strerror(errno)))") }
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(socketPath.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
        Glibc.close(fd)
        return fail("socket path too long: \(socketPath)")
    }
    withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in bytes.enumerated() { p[i] = b } }
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard r == 0 else {
        let e = errno
        Glibc.close(fd)
        return fail("cannot connect to evflowd at \(socketPath): \(String(cString: strerror(e)))")
    }
    let conn = DaemonConnection(fd: fd)
    state.connection.withLock { $0 = conn }
    defer { conn.close() }
    if cancelled() { return }
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    var greeted = false
    let greetingDeadline = monotonicNow() + 5_000_000_000
    while !cancelled() {
        while let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = buffer[..<nl]
            let message: ServerMessage
            do {
                message = try ServerMessage.decode(line)
            } catch {
                return fail("evflowd sent a line the bridge cannot read (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))")
            }
            buffer.removeSubrange(...nl)
            if !greeted {
                guard case .version(let release, let major, _, let keys) = message else {
                    if case .close(let c) = message { return fail("evflowd refused the connection: \(c.reasonText): \(c.message)") }
                    return fail("unexpected greeting from evflowd: \(message.messageClass)")
                }
                guard major == 1 else { return fail("evflowd speaks protocol \(major).x; this bridge speaks 1.x") }
                greeted = true
                // A server older than 1.2 hides no key from anyone.
                observer.on(.next(.connected(conn, release: release, keys: keys ?? .visible)))
                continue
            }
            if case .close(let c) = message { return fail("evflowd closed the connection: \(c.reasonText): \(c.message)") }
            observer.on(.next(.message(message)))
        }
        let wait: Int32 = greeted ? 500 : Int32(max(0, min(500, (greetingDeadline - monotonicNow()) / 1_000_000)))
        if !greeted && wait == 0 { return fail("evflowd did not greet within 5 s") }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let pr = poll(&p, 1, wait)
        if pr == 0 { continue }
        if pr < 0 {
            if errno == EINTR { continue }
            return fail("poll: \(String(cString: strerror(errno)))")
        }
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { continue }
            if cancelled() { return }
            return fail("evflowd connection: \(String(cString: strerror(errno)))")
        }
        if n == 0 {
            if cancelled() { return }
            return fail("evflowd closed the connection")
        }
        buffer.append(contentsOf: chunk[0..<n])
        if buffer.count > 16 << 20 { return fail("evflowd sent a line over 16 MiB") }
    }
}
