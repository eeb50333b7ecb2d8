import FileReading

/// Limits on what a recording may ask of evflow: a hostile file gets a clear error, never a
/// crash or unbounded memory (docs/reliability.md, "Limits on hostile input").
public enum RecordingLimits {
    /// Largest evemu or evtest file read: 256 MiB (about 10 million events — hours of a busy
    /// device). The file is read in chunks and refused as soon as it passes the limit; only
    /// regular files are read (a FIFO, a device such as `/dev/zero` or a directory is refused).
    public static let maxFileBytes = 256 << 20
    /// Largest libinput record (YAML) file: 32 MiB. The composed document is a tree of nodes
    /// many times the size of its text; the shipped recordings are a few hundred KiB.
    public static let maxYAMLFileBytes = 32 << 20
    /// Most devices in one recording.
    public static let maxDevices = 1024

    /// Reads a whole regular file, refusing one over `limit` bytes while reading (not after)
    /// and anything else at the path (a FIFO, a directory, a device) without blocking on it:
    /// `BoundedFile.read`, its failures as `RecordingError.unreadable`.
    static func read(_ path: String, limit: Int) throws(RecordingError) -> [UInt8] {
        do {
            return try BoundedFile.read(path, limit: limit)
        } catch {
            let reason: String
            if case .tooLarge = error.reason {
                reason = "larger than the \(BoundedFileError.size(limit)) limit for a recording file (docs/reliability.md)"
            } else {
                reason = error.reasonText
            }
            throw RecordingError(file: path, line: 0, reason: .unreadable(reason))
        }
    }
}

