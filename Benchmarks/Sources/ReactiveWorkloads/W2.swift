import OpenCombine
import Reactive

// W2: one subject, 100 subscribers that each sum into their own counter, n events (i for i in
// 0..<n). Unit: deliveries (n × 100). Checksum: the sum of all counters.

let w2Subscribers = 100

let w2 = Workload(
    id: "W2",
    summary: "one subject, 100 summing subscribers",
    n: 1_000_000,
    units: { $0 * w2Subscribers },
    unit: "delivery",
    goal: WorkloadGoal(maxRatio: 2, maxAllocsPerUnit: 0),
    rows: [
        WorkloadRow("floor", run: w2Floor),
        WorkloadRow("evflow", run: w2Evflow),
        WorkloadRow("OpenCombine", run: w2OpenCombine),
    ])

@inline(never)
func w2Floor(_ n: Int) -> Int {
    let subject = FloorSubject()
    let counters = (0..<w2Subscribers).map { _ in Counter() }
    let ids = counters.map { counter in subject.subscribe { counter.value &+= $0 } }
    for i in 0..<n { subject.send(i) }
    for id in ids { subject.unsubscribe(id) }
    return counters.reduce(0) { $0 &+ $1.value }
}

@inline(never)
func w2Evflow(_ n: Int) -> Int {
    let subject = PublishSubject<Int>()
    let counters = (0..<w2Subscribers).map { _ in Counter() }
    let subscriptions = counters.map { counter in subject.subscribe(onNext: { counter.value &+= $0 }) }
    for i in 0..<n { subject.on(.next(i)) }
    for subscription in subscriptions { subscription.dispose() }
    return counters.reduce(0) { $0 &+ $1.value }
}

@inline(never)
func w2OpenCombine(_ n: Int) -> Int {
    let subject = PassthroughSubject<Int, Never>()
    let counters = (0..<w2Subscribers).map { _ in Counter() }
    let cancellables = counters.map { counter in subject.sink { counter.value &+= $0 } }
    for i in 0..<n { subject.send(i) }
    for cancellable in cancellables { cancellable.cancel() }
    return counters.reduce(0) { $0 &+ $1.value }
}
