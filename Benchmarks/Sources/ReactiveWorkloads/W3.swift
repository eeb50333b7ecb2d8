import OpenCombine
import Reactive

// W3: n × (subscribe a `map { $0 * 2 } → filter { $0 & 2 == 0 }` chain with a summing
// subscriber to a subject, then dispose). The chain is built once; each op subscribes it.
// So that the checksum proves something: every 1024th op also sends its index through the
// live chain (≈ 0.1% extra work, the same in every row), and after the last op a probe value
// is sent that only a leaked subscription would count.

let w3ProbeEvery = 1024
let w3Probe = 1 << 40

let w3 = Workload(
    id: "W3",
    summary: "subscribe map → filter to a subject, then dispose",
    n: 1_000_000,
    unit: "op",
    goal: WorkloadGoal(maxRatio: 8, maxAllocsPerUnit: 8),
    rows: [
        WorkloadRow("floor", run: w3Floor),
        WorkloadRow("evflow", run: w3Evflow),
        WorkloadRow("OpenCombine", run: w3OpenCombine),
    ])

@inline(never)
func w3Floor(_ n: Int) -> Int {
    let subject = FloorSubject()
    var sum = 0
    for i in 0..<n {
        // The per-subscription stages, as one would hand-write them.
        let sink: (Int) -> Void = { sum &+= $0 }
        let filter: (Int) -> Void = { if $0 & 2 == 0 { sink($0) } }
        let map: (Int) -> Void = { filter($0 * 2) }
        let id = subject.subscribe(map)
        if i % w3ProbeEvery == 0 { subject.send(i) }
        subject.unsubscribe(id)
    }
    subject.send(w3Probe)
    return sum
}

@inline(never)
func w3Evflow(_ n: Int) -> Int {
    let subject = PublishSubject<Int>()
    let chain = subject.map { $0 * 2 }.filter { $0 & 2 == 0 }
    var sum = 0
    for i in 0..<n {
        let subscription = chain.subscribe(onNext: { sum &+= $0 })
        if i % w3ProbeEvery == 0 { subject.on(.next(i)) }
        subscription.dispose()
    }
    subject.on(.next(w3Probe))
    return sum
}

@inline(never)
func w3OpenCombine(_ n: Int) -> Int {
    let subject = PassthroughSubject<Int, Never>()
    let chain = subject.map { $0 * 2 }.filter { $0 & 2 == 0 }
    var sum = 0
    for i in 0..<n {
        let cancellable = chain.sink { sum &+= $0 }
        if i % w3ProbeEvery == 0 { subject.send(i) }
        cancellable.cancel()
    }
    subject.send(w3Probe)
    return sum
}
