import Histogram
import InputModel
import Synchronization

/// Frame ages (ns) in an HDR histogram (HdrHistogram's Swift package): 1 µs to 60 s at two
/// significant digits (each value within 1 %), about 20 KB. Younger than 1 µs counts as 0;
/// older than 60 s counts as 60 s (the summary's `max` then says 60 s). Not thread-safe: each
/// one is written by one thread (the hub's scheduler, or the server's event loop).
public struct LatencyHistogram: Sendable {
    /// The largest age tracked: older ones are recorded as this.
    public static let highest: UInt64 = 60_000_000_000
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1_000, highestTrackableValue: highest,
                                              numberOfSignificantValueDigits: .two)

    /// An empty histogram.
    public init() {}

    /// Records one age; negative ones (an event time ahead of the clock, as a replay faster
    /// than recorded has) count as 0.
    @inlinable
    public mutating func record(_ age: Int64) {
        recordClamped(age <= 0 ? 0 : Swift.min(UInt64(age), Self.highest))
    }

    @usableFromInline
    mutating func recordClamped(_ value: UInt64) {
        histogram.record(value)
    }

    /// Adds another histogram's counts.
    public mutating func add(_ other: LatencyHistogram) {
        histogram.add(other.histogram)
    }

    /// Values recorded.
    public var count: UInt64 { histogram.totalCount }

    /// Count, percentiles and maximum.
    public var summary: LatencySummary {
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

    /// Records a frame's age at `read`.
    @inline(__always)
    func recordRead(_ age: Int64) {
        enter(); defer { leave() }
        read.record(age)
    }

    /// Records a frame's age at `filtered`.
    @inline(__always)
    func recordFiltered(_ age: Int64) {
        enter(); defer { leave() }
        filtered.record(age)
    }

    /// Both histograms, copied.
    var snapshot: (read: LatencyHistogram, filtered: LatencyHistogram) {
        enter(); defer { leave() }
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
