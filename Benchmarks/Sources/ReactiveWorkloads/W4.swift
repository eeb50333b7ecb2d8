import Dispatch
import OpenCombine
import OpenCombineDispatch
import Reactive

// W4: a producer thread (the calling thread) sends i for i in 0..<n; the events are handed to
// a serial dispatch queue where a subscriber sums them; completion (delivered on the queue)
// signals the semaphore the producer waits on. Checksum: the sum. Time: first send to the
// producer's release.

let w4 = Workload(
    id: "W4",
    summary: "producer thread → observeOn(serial queue) → sum; completion releases producer",
    n: 1_000_000,
    unit: "event",
    goal: WorkloadGoal(maxRatio: 0.5, maxAllocsPerUnit: nil),
    rows: [
        WorkloadRow("floor", run: w4Floor),
        WorkloadRow("evflow", run: w4Evflow),
        WorkloadRow("OpenCombine", run: w4OpenCombine),
    ])

/// The floor: one `DispatchQueue.async` per event onto a serial queue.
@inline(never)
func w4Floor(_ n: Int) -> Int {
    let queue = DispatchQueue(label: "bench.w4.floor")
    let sum = Counter()
    let done = DispatchSemaphore(value: 0)
    for i in 0..<n {
        queue.async { sum.value &+= i }
    }
    queue.async { done.signal() }
    done.wait()
    return sum.value
}

@inline(never)
func w4Evflow(_ n: Int) -> Int {
    let scheduler = SerialDispatchQueueScheduler(label: "bench.w4.evflow")
    let subject = PublishSubject<Int>()
    let sum = Counter()
    let done = DispatchSemaphore(value: 0)
    let subscription = subject
        .observeOn(scheduler)
        .subscribe(onNext: { sum.value &+= $0 }, onCompleted: { done.signal() })
    for i in 0..<n { subject.on(.next(i)) }
    subject.on(.completed)
    done.wait()
    subscription.dispose()
    return sum.value
}

@inline(never)
func w4OpenCombine(_ n: Int) -> Int {
    let queue = DispatchQueue(label: "bench.w4.opencombine")
    let subject = PassthroughSubject<Int, Never>()
    let sum = Counter()
    let done = DispatchSemaphore(value: 0)
    let cancellable = subject
        .receive(on: queue.ocombine)
        .sink(receiveCompletion: { _ in done.signal() }, receiveValue: { sum.value &+= $0 })
    for i in 0..<n { subject.send(i) }
    subject.send(completion: .finished)
    done.wait()
    cancellable.cancel()
    return sum.value
}
