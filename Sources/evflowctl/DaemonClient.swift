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

/// A blocking JSON-lines client of evflowd's socket (plain POSIX: evflowctl is short-lived).
final class DaemonClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var eof = false
    /// The greeting.
    private(set) var greeting: [String: Any] = [:]

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
            throw CtlFailure.unavailable("evflowd is not running (cannot connect to \(socketPath): \(String(cString: strerror(e))))")
        }
        let hello = try read()
        if hello["class"] as? String == "CLOSE" {
            throw CtlFailure.unavailable("evflowd refused the connection: \(hello["message"] as? String ?? hello["reason"] as? String ?? "?")")
        }
        guard hello["class"] as? String == "VERSION" else {
            throw CtlFailure.protocolError("unexpected greeting from \(socketPath)")
        }
        greeting = hello
    }

    deinit { close(fd) }

    /// Sends one request line.
    func send(_ object: [String: Any]) throws {
        var data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        data.append(UInt8(ascii: "\n"))
        var off = 0
        while off < data.count {
            let n = data[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw CtlFailure.unavailable("evflowd closed the connection") }
            off += n
        }
    }

    /// The next message; nil at EOF. `timeoutMillis` < 0 waits for ever; on timeout returns
    /// `[:]` so a caller can check a stop flag.
    func readMessage(timeoutMillis: Int32 = -1) throws -> [String: Any]? {
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(buffer[..<nl])
                buffer.removeSubrange(...nl)
                guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else {
                    throw CtlFailure.protocolError("evflowd sent a line that is not a JSON object")
                }
                return object
            }
            if eof { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, timeoutMillis)
            if r == 0 { return [:] }
            if r < 0 { if errno == EINTR { return [:] }; throw CtlFailure.unavailable("poll: \(String(cString: strerror(errno)))") }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { return [:] }
            if n <= 0 { eof = true } else { buffer.append(contentsOf: chunk[0..<n]) }
        }
    }

    /// The next message; EOF is an error.
    func read() throws -> [String: Any] {
        guard let m = try readMessage() else { throw CtlFailure.unavailable("evflowd closed the connection") }
        return m
    }

    /// Sends a request and returns its response (stream messages before it are skipped);
    /// an `ERROR` or `CLOSE` becomes a failure.
    func request(_ object: [String: Any]) throws -> [String: Any] {
        try send(object)
        let cls = object["class"] as? String
        while true {
            let m = try read()
            switch m["class"] as? String {
            case cls: return m
            case "ERROR": throw CtlFailure.protocolError("evflowd: \(m["message"] as? String ?? "error")")
            case "CLOSE": throw CtlFailure.unavailable("evflowd closed the connection: \(m["message"] as? String ?? "")")
            default: continue
            }
        }
    }
}
