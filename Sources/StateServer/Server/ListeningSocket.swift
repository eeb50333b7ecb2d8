#if canImport(Glibc)
import Glibc
#endif

/// Creates the server's listening Unix socket file with its final permissions from the start.
///
/// A socket bound first and `chmod`ed afterwards exists for a moment with the mode the umask
/// left (0777 under umask 000), and a client looping `connect()` gets in. Linux gives the file
/// `bind()` creates the mode of the socket's own inode, masked by the umask, and `fchmod` on an
/// unbound socket sets that inode's mode (`unix_bind`: `SOCK_INODE(sock)->i_mode &
/// ~current_umask()`). So the socket is bound owner-only (mode & 0700), given its group, and only
/// then opened to the final mode: at no moment may anyone connect whom the final mode would refuse.
/// The umask is process-wide, so it is not touched (other threads may be creating files).
enum ListeningSocket {
    /// The longest path `sockaddr_un` holds (107 bytes and the terminating NUL).
    static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A listening socket at `path` with `mode` and `group`; replaces a stale socket file there
    /// (the caller has checked that nobody listens on it). Returns the fd (close-on-exec).
    static func make(path: String, mode: UInt32, group: String?, backlog: Int32) throws(StateServerError) -> Int32 {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maxPathLength else {
            throw .socketPathTooLong(path, limit: maxPathLength)
        }
        var gid: gid_t?
        if let group {
            guard let entry = getgrnam(group) else { throw .unknownGroup(group) }
            gid = entry.pointee.gr_gid
        }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
            guard unlink(path) == 0 else { throw .socketSetup("remove the stale socket \(path)", errno: errno) }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketSetup("socket", errno: errno) }
        var bound = false
        do throws(StateServerError) {
            guard fchmod(fd, mode_t(mode & 0o700)) == 0 else { throw .socketSetup("fchmod the socket for \(path)", errno: errno) }
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { p in
                for (i, b) in bytes.enumerated() { p[i] = b }
            }
            let r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard r == 0 else { throw .socketSetup("bind \(path)", errno: errno) }
            bound = true
            if let gid, chown(path, uid_t(bitPattern: -1), gid) != 0 {
                throw .socketSetup("chown \(path) to group \(group ?? "")", errno: errno)
            }
            guard chmod(path, mode_t(mode)) == 0 else { throw .socketSetup("chmod \(path)", errno: errno) }
            guard listen(fd, backlog) == 0 else { throw .socketSetup("listen on \(path)", errno: errno) }
            return fd
        } catch {
            Glibc.close(fd)
            if bound { unlink(path) }
            throw error
        }
    }
}
