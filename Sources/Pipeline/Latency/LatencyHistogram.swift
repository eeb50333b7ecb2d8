import Histogram
import InputModel
import Synchronization

/// Frame ages (ns) in an HDR histogram (HdrHistogram's Swift package): 1 µs to 60 s at two
/// significant digits (each value within 1 %), about 20 KB. Younger than 1 µs counts as 0;
/// older than 60 s counts as 60 s (the summary's `max` then says 60 s). Not thread-safe: each
/// one is written by one thread (the hub's scheduler, or the server's event loop).
///
/// A run of equal ages is counted before it reaches the histogram (one `record(value, count:)`
/// when the age changes or the figures are read): a replay's ages are nearly all 0, and
/// a histogram record costs about a hundred instructions where a compare and an increment cost
/// a few. Every reading (`count`, `summary`, `add`) includes the pending run.
public struct LatencyHistogram: Sendable {
    /// The largest age tracked: older ones are recorded as this.
    public static let highest: UInt64 = 60_000_000_000
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1_000, highestTrackableValue: highest,
                                              numberOfSignificantValueDigits: .two)
    /// The age of the run not yet in `histogram`, and its length (0: no run).
    @usableFromInline var runValue: UInt64 = 0
    @usableFromInline var runLength: UInt64 = 0

    /// An empty histogram.
    public init() {}

    /// Records one age; negative ones (an event time ahead of the clock, as a replay faster
    /// than recorded has) count as 0.
    @inlinable
    public mutating func record(_ age: Int64) {
        let value = age <= 0 ? 0 : Swift.min(UInt64(age), Self.highest)
        if value == runValue {
            runLength &+= 1
        } else {
            startRun(value)
        }
    }

    /// Moves the pending run into the histogram and starts one of `value`.
    @usableFromInline
    mutating func startRun(_ value: UInt64) {
        flush()
        runValue = value
        runLength = 1
    }

    private mutating func flush() {
        if runLength > 0 { histogram.record(runValue, count: runLength) }
        runLength = 0
    }

    /// The histogram with the pending run in it.
    private var complete: Histogram<UInt64> {
        var copy = self
        copy.flush()
        return copy.histogram
    }

    /// Adds another histogram's counts.
    public mutating func add(_ other: LatencyHistogram) {
        flush()
        histogram.add(other.complete)
    }

    /// Values recorded.
    public var count: UInt64 { histogram.totalCount + runLength }

    /// Count, percentiles and maximum.
    public var summary: LatencySummary {
        let histogram = complete
        guard histogram.totalCount > 0 else { return LatencySummary() }
        return LatencySummary(count: histogram.totalCount, p50: histogram.valueAtPercentile(50),
                              p90: histogram.valueAtPercentile(90), p99: histogram.valueAtPercentile(99),
                              p999: histogram.valueAtPercentile(99.9), max: histogram.max)
    }
}

/// The hub's latency figures at one moment (`DeviceHub.latency`).
public struct HubLatency: Sendable {
    /// What clock the ages are on.
    public var clock: LatencyClock
    /// Per present device, its stages (`read`, `filtered`).
    public var devices: [DeviceID: [LatencyStage: LatencySummary]]
    /// Every device since the hub started, present or gone, per stage.
    public var total: [LatencyStage: LatencyHistogram]
}

/// One device's histograms, written per frame and read by the hub, all on the hub's
/// scheduler (one thread at a time). Without dynamic exclusivity checks, which cost more per
/// frame than the records themselves; debug builds (the tests) check instead that no two
/// records or reads ever overlap.
final class DeviceLatency {
    @exclusivity(unchecked) private(set) var read = LatencyHistogram()
    @exclusivity(unchecked) private(set) var filtered = LatencyHistogram()
    #if DEBUG
    private let busy = Atomic<Bool>(false)
    #endif

    /// Records a frame's age at `read` (a device without a twin: nothing waits for it).
    @inline(__always)
    func recordRead(_ age: Int64) {
        enter(); defer { leave() }
        read.record(age)
    }

    /// Records a frame's age at `filtered` (a device without a twin).
    @inline(__always)
    func recordFiltered(_ age: Int64) {
        enter(); defer { leave() }
        filtered.record(age)
    }

    /// Ages taken but not yet recorded (`noteRead`, `noteFiltered`): a frame's ages are taken
    /// on its way to the twin and recorded after the twin is written (`recordNoted`), so the
    /// records — a hundred instructions or so each — are not on the twin's path.
    @exclusivity(unchecked) private var notedRead: Int64?
    @exclusivity(unchecked) private var notedFiltered: Int64?

    /// Takes a frame's age at `read`; recorded by `recordNoted` (or by the next `noteRead`).
    @inline(__always)
    func noteRead(_ age: Int64) {
        enter(); defer { leave() }
        if let noted = notedRead { read.record(noted) }
        notedRead = age
    }

    /// Takes a frame's age at `filtered`; recorded by `recordNoted` (or by the next `noteFiltered`).
    @inline(__always)
    func noteFiltered(_ age: Int64) {
        enter(); defer { leave() }
        if let noted = notedFiltered { filtered.record(noted) }
        notedFiltered = age
    }

    /// Records the ages noted since the last call.
    @inline(__always)
    func recordNoted() {
        enter(); defer { leave() }
        if let noted = notedRead { read.record(noted) }
        if let noted = notedFiltered { filtered.record(noted) }
        notedRead = nil
        notedFiltered = nil
    }

    /// Both histograms, copied, with any age noted and not yet recorded.
    var snapshot: (read: LatencyHistogram, filtered: LatencyHistogram) {
        enter(); defer { leave() }
        var (read, filtered) = (self.read, self.filtered)
        if let noted = notedRead { read.record(noted) }
        if let noted = notedFiltered { filtered.record(noted) }
        return (read, filtered)
    }

    @inline(__always)
    private func enter() {
        #if DEBUG
        precondition(!busy.exchange(true, ordering: .acquiring), "DeviceLatency: used from two places at once")
        #endif
    }

    @inline(__always)
    private func leave() {
        #if DEBUG
        busy.store(false, ordering: .releasing)
        #endif
    }
}
