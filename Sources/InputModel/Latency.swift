/// Where a live frame's age is measured, in the order a frame passes them (docs/protocol.md,
/// LATENCY). A frame's age at a stage is the time from its kernel timestamp (the `SYN_REPORT`'s
/// `time`) to the moment it leaves that stage, so a stage's own share is the difference from
/// the stage before it.
public enum LatencyStage: String, CaseIterable, Hashable, Sendable, Comparable {
    /// Read from the device: the frame's `SYN_REPORT` came out of libevdev and entered the
    /// pipeline (the kernel's buffering and evflowd's scheduling).
    case read
    /// Out of the noise filter with the state store written (one step in evflowd: the filter's
    /// update writes the store before the frame goes on). A value the filter held comes out as
    /// a frame of its own at the window's end, with that time, and is aged from then.
    case filtered
    /// Handed to a client's socket: the batch holding the frame was written (per client batch,
    /// the oldest frame's age in it; measured over all clients, not per device).
    case sent

    public static func < (a: LatencyStage, b: LatencyStage) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// What clock a latency's two ends are on.
public enum LatencyClock: String, Hashable, Sendable {
    /// Live input: the kernel's `CLOCK_MONOTONIC` event timestamps against `CLOCK_MONOTONIC`.
    case monotonic
    /// A replay: the replay's event times against the replay scheduler's clock (virtual time
    /// in tests). Mostly zero; never to be compared with `monotonic` figures.
    case replay
}

/// One stage's distribution of frame ages, in nanoseconds.
public struct LatencySummary: Hashable, Sendable {
    /// Frames (or, for `sent`, client batches) measured.
    public var count: UInt64
    /// Percentiles: 50, 90, 99 and 99.9.
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    /// The largest age recorded.
    public var max: UInt64

    /// Creates a summary.
    public init(count: UInt64 = 0, p50: UInt64 = 0, p90: UInt64 = 0, p99: UInt64 = 0, p999: UInt64 = 0, max: UInt64 = 0) {
        self.count = count
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
    }
}
