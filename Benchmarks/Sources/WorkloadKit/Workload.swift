// The shape every benchmark family shares: evflow-ratios and the package-benchmark suites
// only see `Workload`s, so a new family is a new target that returns a list of them.

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

/// A goal from docs/benchmarks.md ("Workloads and goals"): time ratio against the floor, and allocations per unit.
public struct WorkloadGoal: Sendable {
    /// Largest acceptable (evflow time / floor time).
    public let maxRatio: Double
    /// Largest acceptable heap allocations per unit, or nil when none is set.
    /// 0 means "none in the steady state": below 0.001 per unit (set-up only).
    public let maxAllocsPerUnit: Double?

    /// Creates a goal.
    public init(maxRatio: Double, maxAllocsPerUnit: Double?) {
        self.maxRatio = maxRatio
        self.maxAllocsPerUnit = maxAllocsPerUnit
    }
}

/// A workload of docs/benchmarks.md with its rows; `rows[0]` is the floor.
public struct Workload: Sendable {
    /// "W1" ... "W5 throttle".
    public let id: String
    /// What one run does.
    public let summary: String
    /// Size of one run as docs/benchmarks.md defines it.
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
