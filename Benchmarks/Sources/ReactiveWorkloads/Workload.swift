/// One implementation of a workload: runs it once at size `n` and returns its checksum.
public struct WorkloadRow: Sendable {
    /// "floor", "evflow" or "OpenCombine".
    public let label: String
    /// Runs the workload once with `n` units; the result must equal the other rows'.
    public let run: @Sendable (_ n: Int) -> Int

    /// Creates a row.
    public init(_ label: String, run: @escaping @Sendable (_ n: Int) -> Int) {
        self.label = label
        self.run = run
    }
}

/// A goal from BENCHMARKS.md: time ratio against the floor, and allocations per unit.
public struct WorkloadGoal: Sendable {
    /// Largest acceptable (evflow time / floor time).
    public let maxRatio: Double
    /// Largest acceptable heap allocations per unit, or nil when BENCHMARKS.md sets none.
    /// 0 means "none in the steady state": below 0.001 per unit (set-up only).
    public let maxAllocsPerUnit: Double?

    /// Creates a goal.
    public init(maxRatio: Double, maxAllocsPerUnit: Double?) {
        self.maxRatio = maxRatio
        self.maxAllocsPerUnit = maxAllocsPerUnit
    }
}

/// A workload of BENCHMARKS.md with its rows; `rows[0]` is the floor.
public struct Workload: Sendable {
    /// "W1" ... "W5 throttle".
    public let id: String
    /// What one run does.
    public let summary: String
    /// Size of one run as BENCHMARKS.md defines it.
    public let n: Int
    /// Units of work per run for a size `n` (deliveries for W2).
    public let units: @Sendable (_ n: Int) -> Int
    /// Unit name for throughput and allocations ("event", "delivery", "op").
    public let unit: String
    /// The evflow goal.
    public let goal: WorkloadGoal
    /// Floor first, then evflow, then OpenCombine when it has the operators.
    public let rows: [WorkloadRow]
    /// Why a row is missing ("—" in the table), if one is.
    public let missingNote: String?

    /// Creates a workload.
    public init(id: String, summary: String, n: Int, units: @escaping @Sendable (Int) -> Int = { $0 },
                unit: String, goal: WorkloadGoal, rows: [WorkloadRow], missingNote: String? = nil) {
        self.id = id
        self.summary = summary
        self.n = n
        self.units = units
        self.unit = unit
        self.goal = goal
        self.rows = rows
        self.missingNote = missingNote
    }
}

/// Every reactive core workload, in BENCHMARKS.md's order.
public enum ReactiveWorkloads {
    /// W1–W5 (W5 as two workloads: throttle and debounce).
    public static let all: [Workload] = [w1, w2, w3, w4, w5Throttle, w5Debounce]
}

/// A mutable counter shared with closures that may run on another thread (W4): the
/// hand-off itself (semaphore, queue) orders the accesses.
final class Counter: @unchecked Sendable {
    var value = 0
    init() {}
}

/// FNV-1a style mixing: the W5 checksum covers values, emission times and their order.
@inline(__always)
func mix(_ hash: Int, _ value: Int) -> Int {
    (hash ^ value) &* 0x100000001b3
}
