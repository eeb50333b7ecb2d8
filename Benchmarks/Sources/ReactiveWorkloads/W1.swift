import OpenCombine
import Reactive

// W1: source sends `i >> 1` for i in 0..<n → map { $0 * 2 } → filter { $0 & 2 == 0 } →
// distinctUntilChanged → a subscriber that sums. Checksum: the sum.

let w1 = Workload(
    id: "W1",
    summary: "subject → map → filter → distinctUntilChanged → sum",
    n: 10_000_000,
    unit: "event",
    goal: WorkloadGoal(maxRatio: 3, maxAllocsPerUnit: 0),
    rows: [
        WorkloadRow("floor", run: w1Floor),
        WorkloadRow("evflow", run: w1Evflow),
        WorkloadRow("OpenCombine", run: w1OpenCombine),
    ])

@inline(never)
func w1Floor(_ n: Int) -> Int {
    let subject = FloorSubject()
    var sum = 0
    var last: Int? = nil
    let sink: (Int) -> Void = { sum &+= $0 }
    let distinct: (Int) -> Void = { value in
        if let previous = last, previous == value { return }
        last = value
        sink(value)
    }
    let filter: (Int) -> Void = { if $0 & 2 == 0 { distinct($0) } }
    let map: (Int) -> Void = { filter($0 * 2) }
    let id = subject.subscribe(map)
    for i in 0..<n { subject.send(i >> 1) }
    subject.unsubscribe(id)
    return sum
}

@inline(never)
func w1Evflow(_ n: Int) -> Int {
    let subject = PublishSubject<Int>()
    var sum = 0
    let subscription = subject
        .map { $0 * 2 }
        .filter { $0 & 2 == 0 }
        .distinctUntilChanged()
        .subscribe(onNext: { sum &+= $0 })
    for i in 0..<n { subject.on(.next(i >> 1)) }
    subscription.dispose()
    return sum
}

@inline(never)
func w1OpenCombine(_ n: Int) -> Int {
    let subject = PassthroughSubject<Int, Never>()
    var sum = 0
    let cancellable = subject
        .map { $0 * 2 }
        .filter { $0 & 2 == 0 }
        .removeDuplicates()
        .sink { sum &+= $0 }
    for i in 0..<n { subject.send(i >> 1) }
    cancellable.cancel()
    return sum
}
