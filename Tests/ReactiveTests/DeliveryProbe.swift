import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Records what an observer receives from several threads and detects overlapping
/// deliveries: `enter()`/`leave()` bracket each delivery; `overlaps` counts deliveries that
/// began while another was still in flight (must stay 0 for serial delivery).
final class DeliveryProbe<Value: Sendable>: @unchecked Sendable {
    private let inFlight = Atomic<Int>(0)
    private let overlapCount = Atomic<Int>(0)
    private let log = Mutex<[Value]>([])

    /// Deliveries that overlapped another one.
    var overlaps: Int { overlapCount.load(ordering: .acquiring) }
    /// Everything received, in delivery order.
    var values: [Value] { log.withLock { $0 } }

    /// Records one delivery; spins briefly inside it so that an overlap would be seen.
    func receive(_ value: Value) {
        if inFlight.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue > 1 {
            overlapCount.wrappingAdd(1, ordering: .relaxed)
        }
        log.withLock { $0.append(value) }
        for _ in 0..<20 { _ = inFlight.load(ordering: .relaxed) }
        inFlight.wrappingSubtract(1, ordering: .acquiringAndReleasing)
    }
}

/// Checks that, for each producer, its values appear in increasing order and all of them
/// arrived: `values` are `producer * stride + i` with `i` in `0..<perProducer`.
func perProducerComplete(_ values: [Int], producers: Int, perProducer: Int, stride: Int = 1_000_000) -> Bool {
    var next = Array(repeating: 0, count: producers)
    for v in values {
        let p = v / stride, i = v % stride
        guard p >= 0, p < producers, i == next[p] else { return false }
        next[p] += 1
    }
    return next.allSatisfy { $0 == perProducer }
}

/// Runs `body(thread)` on `threads` real threads that start together, and joins them all,
/// so that everything the bodies captured is released when this returns (the live-resource
/// count the test's trait checks does not wait on a thread still winding down).
func runConcurrently(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Start: @unchecked Sendable {
        let body: @Sendable (Int) -> Void
        let index: Int
        let ready: DispatchSemaphore
        let go: DispatchSemaphore
        init(_ body: @escaping @Sendable (Int) -> Void, _ index: Int, _ ready: DispatchSemaphore, _ go: DispatchSemaphore) {
            self.body = body; self.index = index; self.ready = ready; self.go = go
        }
    }
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    var handles: [pthread_t] = []
    for t in 0..<threads {
        let start = Unmanaged.passRetained(Start(body, t, ready, go)).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            start.ready.signal()
            start.go.wait()
            start.body(start.index)
            return nil
        }, start)
        precondition(rc == 0, "pthread_create failed")
        handles.append(handle)
    }
    for _ in 0..<threads { ready.wait() }
    for _ in 0..<threads { go.signal() }
    for h in handles { pthread_join(h, nil) }
}

/// A flag set from any thread.
final class AtomicFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    /// Sets it.
    func set() { flag.store(true, ordering: .releasing) }
    /// Whether it was set.
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// Checks that, for each producer, its values (`producer * stride + i`) never go backwards.
func perProducerOrdered(_ values: [Int], producers: Int, stride: Int = 1_000_000) -> Bool {
    var last = Array(repeating: -1, count: producers)
    for v in values {
        let p = v / stride, i = v % stride
        guard p >= 0, p < producers, i >= last[p] else { return false }
        last[p] = i
    }
    return true
}
