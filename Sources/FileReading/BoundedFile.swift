#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file the daemon was told to read (a configuration, a recording) under a size
/// limit, without ever blocking on what is not a file: a FIFO, a directory, a device node or a
/// socket at the path is refused before a byte is read (docs/reliability.md, "Hostile input to
/// evflowd"). The one reader of the configuration loader and the recording readers.
public enum BoundedFile {
    /// Reads the regular file at `path`, refusing one larger than `limit` bytes.
    ///
    /// The file is opened with `O_NONBLOCK`, so opening a FIFO with no writer returns at once
    /// instead of waiting for one (a SIGHUP reload must never hang in `open`); `fstat` on the
    /// open descriptor then refuses everything but a regular file (no race with a rename
    /// between a check and the open). The size is checked before reading and again while
    /// reading, so a file that grows meanwhile is still refused at the limit, never read for ever.
    public static func read(_ path: String, limit: Int) throws(BoundedFileError) -> [UInt8] {
        let (fd, size) = try openRegularFile(path)
        defer { close(fd) }
        guard size <= limit else { throw BoundedFileError(path: path, reason: .tooLarge(limit: limit)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try read(fd, into: &chunk, at: 0, path: path)
            if n == 0 { return bytes }
            guard bytes.count + n <= limit else { throw BoundedFileError(path: path, reason: .tooLarge(limit: limit)) }
            bytes += chunk[0..<n]
        }
    }

    /// The first `count` bytes of the regular file at `path` (fewer if it is shorter): enough
    /// to tell a format by its first line. Opened and checked as `read(_:limit:)` does.
    public static func readHead(_ path: String, count: Int) throws(BoundedFileError) -> [UInt8] {
        let (fd, _) = try openRegularFile(path)
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try read(fd, into: &head, at: filled, path: path)
            if n == 0 { break }
            filled += n
        }
        return Array(head[..<filled])
    }

    /// Opens `path` without blocking and refuses anything but a regular file; returns the
    /// descriptor (the caller closes it) and the file's size.
    private static func openRegularFile(_ path: String) throws(BoundedFileError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw BoundedFileError(path: path, reason: .cannotOpen(errno: errno)) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = errno
            close(fd)
            throw BoundedFileError(path: path, reason: .cannotRead(errno: error))
        }
        let kind = FileKind(mode: status.st_mode)
        guard kind == .regular else {
            close(fd)
            throw BoundedFileError(path: path, reason: .notARegularFile(kind))
        }
        return (fd, Int(status.st_size))
    }

    /// One `read(2)` into `buffer` from `offset` to its end, retried on EINTR; 0 at the end
    /// of the file.
    private static func read(_ fd: Int32, into buffer: inout [UInt8], at offset: Int, path: String) throws(BoundedFileError) -> Int {
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n >= 0 { return n }
            if errno != EINTR { throw BoundedFileError(path: path, reason: .cannotRead(errno: errno)) }
        }
    }

    /// What kind of file system object a path names (`st_mode`'s type bits).
    public enum FileKind: Hashable, Sendable, CustomStringConvertible {
        case regular, directory, fifo, characterDevice, blockDevice, socket, symbolicLink, unknown

        init(mode: mode_t) {
            switch mode & S_IFMT {
            case S_IFREG: self = .regular
            case S_IFDIR: self = .directory
            case S_IFIFO: self = .fifo
            case S_IFCHR: self = .characterDevice
            case S_IFBLK: self = .blockDevice
            case S_IFSOCK: self = .socket
            case S_IFLNK: self = .symbolicLink
            default: self = .unknown
            }
        }

        public var description: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .fifo: "a FIFO (named pipe)"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            case .socket: "a socket"
            case .symbolicLink: "a symbolic link"
            case .unknown: "not a file"
            }
        }
    }
}

/// Why `BoundedFile.read` refused or failed, with the path.
public struct BoundedFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Hashable, Sendable {
        /// `open` failed.
        case cannotOpen(errno: Int32)
        /// `fstat` or `read` failed.
        case cannotRead(errno: Int32)
        /// A directory, FIFO, device node or socket: never read.
        case notARegularFile(BoundedFile.FileKind)
        /// Larger than the limit (bytes).
        case tooLarge(limit: Int)
    }

    /// The path given.
    public var path: String
    /// Why.
    public var reason: Reason

    /// Creates an error.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The reason in words, without the path: `no such file`, `a directory, not a regular
    /// file`, `larger than the limit`. Callers that know what the file is phrase the limit.
    public var reasonText: String {
        switch reason {
        case .cannotOpen(let e): e == ENOENT ? "no such file" : String(cString: strerror(e))
        case .cannotRead(let e): String(cString: strerror(e))
        case .notARegularFile(let kind): "\(kind), not a regular file"
        case .tooLarge(let limit): "larger than the \(BoundedFileError.size(limit)) limit"
        }
    }

    /// `1024 KiB`, `256 MiB`: the limits are powers of two.
    public static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }

    public var description: String { "\(path): \(reasonText)" }
}
