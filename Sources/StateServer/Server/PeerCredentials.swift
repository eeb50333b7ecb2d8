#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// The peer of a Unix socket connection as the kernel recorded it at `connect()`:
/// `SO_PEERCRED` (pid, uid, gid) and `SO_PEERGROUPS` (supplementary groups).
///
/// Both are the credentials the peer had when it connected, read from the socket itself — not
/// from `/proc/PID/status`, which could be another process by then and which the unit's
/// `ProtectProc=invisible` hides for other users' processes.
struct PeerCredentials: Sendable, Hashable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
    /// Supplementary groups (ascending, as the kernel keeps them); see `GroupBuffer` for the limits.
    var groups: [UInt32]

    /// Reads the peer's credentials; nil (in the future) when the socket cannot tell.
    static func read(from channel: Channel) -> EventLoopFuture<PeerCredentials?> {
        #if os(Linux)
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let cred: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        // The buffer's own type, not an Optional of it: NIO sizes the kernel's buffer by the type.
        let groups: EventLoopFuture<GroupBuffer> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERGROUPS))
        let groupList = groups.map { $0.groups }.recover { _ in [] }   // ERANGE: more than 256
        return cred.and(groupList)
            .map { cred, groups -> PeerCredentials? in
                PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: groups)
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

    /// Room for `SO_PEERGROUPS`' answer: 256 `gid_t`s.
    ///
    /// NIO's `unsafeGetSocketOption` reads into a value of a fixed type and does not report
    /// the length the kernel returned, so the buffer is zero-filled (NIO does that) and the
    /// groups are the entries before the zero padding. The kernel keeps the list sorted
    /// ascending, so padding is always at the end and only a lone group 0 (root's group as the
    /// only supplementary group) is indistinguishable from none. A peer in more than 256
    /// groups makes the kernel answer `ERANGE`; its supplementary groups then count as none
    /// (it is still matched by uid and primary group).
    struct GroupBuffer: Sendable {
        var a = SIMD64<UInt32>(), b = SIMD64<UInt32>(), c = SIMD64<UInt32>(), d = SIMD64<UInt32>()

        static let capacity = 256

        /// The groups in the buffer, without the zero padding.
        var groups: [UInt32] {
            var all: [UInt32] = []
            all.reserveCapacity(Self.capacity)
            for v in [a, b, c, d] { for i in v.indices { all.append(v[i]) } }
            guard let last = all.lastIndex(where: { $0 != 0 }) else { return [] }
            return Array(all[...last])
        }
    }
}
