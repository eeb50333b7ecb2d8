// The reactive core workloads as package-benchmark suites: `swift package benchmark` (run from
// Benchmarks/) reports wall clock, throughput and malloc counts per row. Rows are the same
// functions evflow-ratios times; each iteration runs the workload once at the docs/benchmarks.md
// size and keeps its checksum alive with blackHole.
import Benchmark
import ReactiveWorkloads

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        warmupIterations: 1,
        scalingFactor: .one,
        maxDuration: .seconds(10),
        maxIterations: 5
    )
    for workload in ReactiveWorkloads.all {
        for row in workload.rows {
            Benchmark("\(workload.id) \(row.label)") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(row.run(workload.n))
                }
            }
        }
    }
}
