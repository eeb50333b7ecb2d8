import EvflowProtocol
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a command failed, with the process exit code it maps to (sysexits.h).
struct CtlFailure: Error, CustomStringConvertible {
    /// The one-line message for standard error.
    var description: String
    /// The exit code.
    var code: Int32

    /// The daemon is not reachable (`EX_UNAVAILABLE`).
    static func unavailable(_ message: String) -> CtlFailure { CtlFailure(description: message, code: 69) }
    /// The daemon answered with an error or something unexpected (`EX_DATAERR`).
    static func protocolError(_ message: String) -> CtlFailure { CtlFailure(description: message, code: 65) }
    /// A local file problem (`EX_IOERR` / `EX_CANTCREAT`).
    static func io(_ message: String) -> CtlFailure { CtlFailure(description: message, code: 74) }
}

/// One line from evflowd: the decoded message and the line as received (for `--json`).
struct Reply {
    /// The message.
    var message: ServerMessage
    /// The line, without its newline.
    var line: String
}

/// A blocking JSON-lines client of evflowd's socket (plain POSIX: evflowctl is short-lived).
/// Requests are encoded and replies decoded with the protocol's own types (`EvflowProtocol`).
final class DaemonClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var eof = false
    /// The greeting's release.
    private(set) var release = ""
    /// Whether evflowd shows this user key codes (the greeting's `keys`; nil before 1.2).
    private(set) var keys: KeyVisibility?

    /// Connects and reads the greeting; a missing or dead socket is `unavailable`.
    init(socketPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CtlFailure.unavailable("cannot create a socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            close(fd)
            throw CtlFailure.unavailable("socket path too long: \(socketPath)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { p in
            for (i, b) in bytes.enumerated() { p[i] = b }
        }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let e = errno
            close(fd)
            throw CtlFailure.unavailable(Self.connectFailure(socketPath, errno: e))
        }
        switch try read().message {
        case .close(let notice):
            throw CtlFailure.unavailable("evflowd refused the connection (\(notice.reasonText)): \(notice.message)")
        case .version(let release, _, _, let keys):
            self.release = release
            self.keys = keys
        default:
            throw CtlFailure.protocolError("unexpected greeting from \(socketPath)")
        }
    }

    deinit { close(fd) }

    /// What a failed `connect()` to `path` means for the user: only a missing socket or one
    /// nobody listens on says evflowd is not running.
    static func connectFailure(_ path: String, errno e: Int32) -> String {
        let reason = String(cString: strerror(e))
        switch e {
        case ENOENT, ECONNREFUSED:
            return "evflowd is not running (cannot connect to \(path): \(reason))"
        case EACCES, EPERM:
            return "permission denied connecting to \(path): evflowd may well be running, but the socket's "
                + "mode leaves this user out (users who may talk to evflowd are in the socket's group, "
                + "'evflow' for the installed service)"
        case ENOTSOCK, ECONNRESET:
            return "\(path) is not evflowd's socket (\(reason))"
        default:
            return "cannot connect to \(path): \(reason)"
        }
    }

    /// Sends one request line.
    func send(_ request: Request) throws {
        let data = request.encoded()
        var off = 0
        while off < data.count {
            let n = data[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw CtlFailure.unavailable("evflowd closed the connection") }
            off += n
        }
    }

    /// The next message; nil at EOF. `timeoutMillis` < 0 waits for ever; on timeout (or a
    /// signal) returns `.timedOut` so a caller can check a stop flag.
    func readMessage(timeoutMillis: Int32 = -1) throws -> Read {
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                do {
                    return .reply(Reply(message: try ServerMessage.decode(line), line: String(decoding: line, as: UTF8.self)))
                } catch {
                    throw CtlFailure.protocolError("evflowd sent a line evflowctl cannot read: \(error)")
                }
            }
            if eof { return .end }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, timeoutMillis)
            if r == 0 { return .timedOut }
            if r < 0 { if errno == EINTR { return .timedOut }; throw CtlFailure.unavailable("poll: \(String(cString: strerror(errno)))") }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { return .timedOut }
            if n <= 0 { eof = true } else { buffer.append(contentsOf: chunk[0..<n]) }
        }
    }

    /// What `readMessage` got.
    enum Read {
        case reply(Reply)
        case timedOut
        case end
    }

    /// The next message; EOF is an error.
    func read() throws -> Reply {
        while true {
            switch try readMessage() {
            case .reply(let r): return r
            case .timedOut: continue
            case .end: throw CtlFailure.unavailable("evflowd closed the connection")
            }
        }
    }

    /// Sends a request and returns its response (stream messages before it are skipped);
    /// an `ERROR` or `CLOSE` becomes a failure.
    func request(_ request: Request) throws -> Reply {
        try send(request)
        while true {
            let r = try read()
            switch r.message {
            case .error(let e): throw CtlFailure.protocolError("evflowd: \(e.message)")
            case .close(let c): throw CtlFailure.unavailable("evflowd closed the connection (\(c.reasonText)): \(c.message)")
            case let m where m.messageClass == request.requestClass: return r
            default: continue
            }
        }
    }
}
