@_exported import WorkloadKit

/// Every reactive core workload, in docs/benchmarks.md's order.
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
