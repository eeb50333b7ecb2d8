#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// The peer of a Unix socket connection (`SO_PEERCRED`), plus its supplementary groups.
struct PeerCredentials: Sendable, Hashable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
    /// Supplementary groups, from `/proc/PID/status` (NIO gives no access to the fd, so
    /// `SO_PEERGROUPS` with its variable-length result is out of reach); empty if unreadable.
    var groups: [UInt32]

    /// Reads the peer's credentials; nil (in the future) when the socket cannot tell.
    static func read(from channel: Channel) -> EventLoopFuture<PeerCredentials?> {
        #if os(Linux)
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let future: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(Self.soPeerCred))
        return future.map { cred -> PeerCredentials? in
            PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: supplementaryGroups(of: cred.pid))
        }.recover { _ in nil }
        #else
        return channel.eventLoop.makeSucceededFuture(nil)
        #endif
    }

    /// `struct ucred` (Glibc hides it behind _GNU_SOURCE): pid_t, uid_t, gid_t.
    struct UCred: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// `SO_PEERCRED` from asm-generic/socket.h (x86-64, arm64, riscv).
    static let soPeerCred: Int32 = 17

    /// The `Groups:` line of `/proc/PID/status`.
    static func supplementaryGroups(of pid: Int32) -> [UInt32] {
        guard pid > 0, let fd = Optional(open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)), fd >= 0 else { return [] }
        defer { _ = Glibc.close(fd) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("Groups:") {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        }
        return []
    }
}
