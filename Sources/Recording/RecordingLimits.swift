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

    /// Latest time a recording may hold, in nanoseconds after its first event (a sensor
    /// recording: its first sample): 2⁶¹ ns, about 73 years (issue #34).
    ///
    /// Times are `Int64` nanoseconds, and everything downstream adds to them: a replay adds
    /// its start on the scheduler's clock (`CLOCK_MONOTONIC`, time since boot: below 2⁶¹ for
    /// 73 years of uptime), a looping replay a pass's length, the filters a window (at most
    /// `FilterConfig.maxIntervalNanoseconds`, 10⁶ s < 2⁵⁰ ns), the analyses a slice. With each
    /// term below 2⁶¹, such sums stay below 2⁶³ and fit; a file whose times go further would
    /// make them trap (a time of 9223372036.854 s did). A later line is refused with
    /// `badNumber(field: timestampField)`, naming its line (docs/reliability.md, "Limits on
    /// hostile input").
    public static let maxTimeNanoseconds: Int64 = 1 << 61
    /// `maxTimeNanoseconds` in whole microseconds, the unit recordings are written in.
    public static let maxTimeMicroseconds: Int64 = maxTimeNanoseconds / 1000
    /// The field a time past `maxTimeMicroseconds` is refused for: says what the limit is.
    public static let timestampField = "timestamp (at most \(RecordingError.Reason.seconds(maxTimeMicroseconds)) s, about 73 years, after the first)"

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

