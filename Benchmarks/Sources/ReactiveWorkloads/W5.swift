import Reactive

// W5: virtual time. For i in 0..<n: advance the clock to i ms, then send i; finally advance
// 10 ms more. Once through `throttle(5 ms, latest: true)`, once (separately) through
// `debounce(5 ms)`. Checksum: a hash over every emitted value and its emission time (ms), in
// order. OpenCombine has no virtual-time scheduler: no row.

let w5Window: Int64 = 5_000_000
let millisecond: Int64 = 1_000_000
let openCombineHasNoVirtualTime = "OpenCombine has no virtual-time scheduler"

let w5Throttle = Workload(
    id: "W5 throttle",
    summary: "virtual time, 1 event/ms → throttle(5 ms, latest: true)",
    n: 1_000_000,
    unit: "event",
    goal: WorkloadGoal(maxRatio: 2, maxAllocsPerUnit: 1),
    rows: [
        WorkloadRow("floor", run: w5ThrottleFloor),
        WorkloadRow("evflow", run: w5ThrottleEvflow),
    ],
    missingNote: openCombineHasNoVirtualTime)

let w5Debounce = Workload(
    id: "W5 debounce",
    summary: "virtual time, 1 event/ms → debounce(5 ms)",
    n: 1_000_000,
    unit: "event",
    goal: WorkloadGoal(maxRatio: 2, maxAllocsPerUnit: 1),
    rows: [
        WorkloadRow("floor", run: w5DebounceFloor),
        WorkloadRow("evflow", run: w5DebounceEvflow),
    ],
    missingNote: openCombineHasNoVirtualTime)

/// The floor's throttle, written plainly: the same decisions as evflow's throttle with
/// `latest: true` (first value of a window at once, last value kept for the window's end,
/// a value at or after the window's end opens a new window).
@inline(never)
func w5ThrottleFloor(_ n: Int) -> Int {
    let clock = FloorVirtualScheduler()
    var hash = 0
    var windowEnd: Int64? = nil
    var kept: Int? = nil
    var armed = false
    var generation: UInt64 = 0
    let emit: (Int) -> Void = { value in
        hash = mix(mix(hash, value), Int(clock.now / millisecond))
    }
    clock.onTimer = { token in
        guard armed, token == generation else { return }
        armed = false
        guard let value = kept else {
            windowEnd = nil
            return
        }
        kept = nil
        windowEnd = clock.now + w5Window
        emit(value)
    }
    let onNext: (Int) -> Void = { value in
        if let end = windowEnd, clock.now < end {
            kept = value
            if armed { return }
            armed = true
            generation &+= 1
            clock.arm(at: end, token: generation)
            return
        }
        windowEnd = clock.now + w5Window
        if kept != nil || armed {
            kept = nil
            armed = false
            generation &+= 1
        }
        emit(value)
    }
    for i in 0..<n {
        clock.advance(to: Int64(i) * millisecond)
        onNext(i)
    }
    clock.advance(to: clock.now + 10 * millisecond)
    return hash
}

@inline(never)
func w5ThrottleEvflow(_ n: Int) -> Int {
    let scheduler = VirtualTimeScheduler()
    let subject = PublishSubject<Int>()
    var hash = 0
    let subscription = subject
        .throttle(.milliseconds(5), latest: true, scheduler: scheduler)
        .subscribe(onNext: { hash = mix(mix(hash, $0), Int(scheduler.now / millisecond)) })
    for i in 0..<n {
        scheduler.advance(to: Int64(i) * millisecond)
        subject.on(.next(i))
    }
    scheduler.advance(by: .milliseconds(10))
    subscription.dispose()
    return hash
}

/// The floor's debounce: each value replaces the pending one and re-arms the timer with a
/// new token; the timer emits the pending value if its token is still current.
@inline(never)
func w5DebounceFloor(_ n: Int) -> Int {
    let clock = FloorVirtualScheduler()
    var hash = 0
    var pending: Int? = nil
    var generation: UInt64 = 0
    clock.onTimer = { token in
        guard token == generation, let value = pending else { return }
        pending = nil
        hash = mix(mix(hash, value), Int(clock.now / millisecond))
    }
    let onNext: (Int) -> Void = { value in
        pending = value
        generation &+= 1
        clock.arm(at: clock.now + w5Window, token: generation)
    }
    for i in 0..<n {
        clock.advance(to: Int64(i) * millisecond)
        onNext(i)
    }
    clock.advance(to: clock.now + 10 * millisecond)
    return hash
}

@inline(never)
func w5DebounceEvflow(_ n: Int) -> Int {
    let scheduler = VirtualTimeScheduler()
    let subject = PublishSubject<Int>()
    var hash = 0
    let subscription = subject
        .debounce(.milliseconds(5), scheduler: scheduler)
        .subscribe(onNext: { hash = mix(mix(hash, $0), Int(scheduler.now / millisecond)) })
    for i in 0..<n {
        scheduler.advance(to: Int64(i) * millisecond)
        subject.on(.next(i))
    }
    scheduler.advance(by: .milliseconds(10))
    subscription.dispose()
    return hash
}
