#if canImport(Glibc)
import Glibc
#endif
import YAML

/// Limits on what a recording may ask of evflow: a hostile file gets a clear error, never a
/// crash or unbounded memory (docs/reliability.md, "Limits on hostile input").
public enum RecordingLimits {
    /// Largest evemu or evtest file read: 256 MiB (about 10 million events — hours of a busy
    /// device). The file is read in chunks and refused as soon as it passes the limit, so a
    /// device file or pipe that never ends (`/dev/zero`) is refused too.
    public static let maxFileBytes = 256 << 20
    /// Largest libinput record (YAML) file: 32 MiB. The composed document is a tree of nodes
    /// many times the size of its text; the shipped recordings are a few hundred KiB.
    public static let maxYAMLFileBytes = 32 << 20
    /// Most devices in one recording.
    public static let maxDevices = 1024

    /// Reads a whole file, refusing one over `limit` bytes while reading (not after).
    static func read(_ path: String, limit: Int) throws(RecordingError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
            throw RecordingError(file: path, line: 0, reason: .unreadable(reason))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RecordingError(file: path, line: 0, reason: .unreadable(String(cString: strerror(errno))))
            }
            if n == 0 { return bytes }
            guard bytes.count + n <= limit else {
                throw RecordingError(file: path, line: 0, reason: .unreadable(
                    "larger than the \(limit >> 20) MiB limit for a recording file (docs/reliability.md)"))
            }
            bytes += chunk[0..<n]
        }
    }
}

/// The guard against YAML alias bombs, shared by the libinput record reader and the filter
/// configuration loader.
public enum YAMLLimits {
    /// The nodes a document may expand to: 4 per byte of text (at least 10,000). A document
    /// can only have more through aliases used over and over (a "billion laughs"), which would
    /// make walking it take exponential time.
    public static func maxNodes(textBytes: Int) -> Int { max(10_000, 4 * textBytes) }

    /// Whether `node` expands to more than `limit` nodes, counting an aliased node at every
    /// place it is used; stops counting at the limit.
    public static func expandsBeyond(_ node: YAMLNode, limit: Int) -> Bool {
        node.expandedCount(limit: limit) == nil
    }
}
