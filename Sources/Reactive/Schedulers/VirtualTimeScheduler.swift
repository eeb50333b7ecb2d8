/// A scheduler whose clock only moves when it is told to: tests and replay.
///
/// Scheduled work is kept in a binary heap ordered by (due time, order of scheduling). Timer
/// slots from `makeTimer` are re-armed by pushing a plain heap entry (no allocation); an
/// entry whose token no longer matches its timer is stale and skipped. Heap entries refer to
/// timers by slot number, not by reference, so an invalidated timer is released at once
/// rather than when its stale entries come due. Everything runs on the thread that advances
/// the clock; drive one instance from one thread at a time.
open class VirtualTimeScheduler: SchedulerType, @unchecked Sendable {
    @usableFromInline
    enum Item {
        case action(VirtualScheduledAction)
        case timer(slot: Int, token: UInt64)
    }

    @usableFromInline
    struct Entry {
        @usableFromInline var time: Int64
        @usableFromInline var order: UInt64
        @usableFromInline var item: Item

        @inlinable
        init(time: Int64, order: UInt64, item: Item) {
            self.time = time
            self.order = order
            self.item = item
        }

        @inlinable
        func runsBefore(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && order < other.order)
        }
    }

    @usableFromInline var heap = BinaryHeap<Entry>(by: { $0.runsBefore($1) })
    @usableFromInline var nextOrder: UInt64 = 0
    @usableFromInline var clock: Int64
    @usableFromInline var running = false
    /// Live timers by slot; a slot is reused after its timer is invalidated. Tokens are unique
    /// per scheduler, so an old entry never matches a slot's new timer.
    @usableFromInline var timers: ContiguousArray<VirtualTimer?> = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var nextToken: UInt64 = 1

    /// Creates a scheduler whose clock starts at `initialClock` (ns).
    public init(initialClock: Int64 = 0) {
        clock = initialClock
    }

    /// The virtual clock, in nanoseconds.
    @inlinable
    public var now: Int64 { clock }

    /// Whether work is pending.
    public var hasPendingWork: Bool { !heap.isEmpty }

    /// Runs `action` at the current virtual time, after work already due now.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> Disposable {
        scheduleAbsolute(clock, action)
    }

    /// Runs `action` at `now + dueTime`.
    @discardableResult
    public func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> Disposable {
        scheduleAbsolute(clock + max(dueTime.nanoseconds, 0), action)
    }

    /// Runs `action` at absolute virtual time `time` (ns).
    @discardableResult
    public func scheduleAbsolute(_ time: Int64, _ action: @escaping () -> Void) -> Disposable {
        let item = VirtualScheduledAction(action)
        push(time: max(time, clock), .action(item))
        return item
    }

    /// A reusable timer slot.
    public func makeTimer(_ handler: @escaping (UInt64) -> Void) -> SchedulerTimer {
        let slot = freeSlots.popLast() ?? { timers.append(nil); return timers.count - 1 }()
        let timer = VirtualTimer(scheduler: self, slot: slot, handler: handler)
        timers[slot] = timer
        return timer
    }

    @usableFromInline
    func release(slot: Int) {
        timers[slot] = nil
        freeSlots.append(slot)
    }

    @inlinable
    func push(time: Int64, _ item: Item) {
        heap.insert(Entry(time: time, order: nextOrder, item: item))
        nextOrder &+= 1
    }

    /// Runs everything due up to `time` (inclusive), in order, moving the clock to each
    /// item's due time; then sets the clock to `time`.
    public func advance(to time: Int64) {
        precondition(!running, "VirtualTimeScheduler.advance called re-entrantly")
        running = true
        defer { running = false }
        while let top = heap.min, top.time <= time {
            heap.removeMin()
            if top.time > clock { clock = top.time }
            run(top.item)
        }
        if time > clock { clock = time }
    }

    /// Advances the clock by `interval`.
    public func advance(by interval: RxTimeInterval) {
        advance(to: clock + interval.nanoseconds)
    }

    /// Runs all pending work (including work it schedules) until none is left or the clock
    /// would pass `limit`.
    public func run(until limit: Int64 = .max) {
        precondition(!running, "VirtualTimeScheduler.run called re-entrantly")
        running = true
        defer { running = false }
        while let top = heap.min, top.time <= limit {
            heap.removeMin()
            if top.time > clock { clock = top.time }
            run(top.item)
        }
    }

    @inlinable
    func run(_ item: Item) {
        switch item {
        case .action(let action):
            action.run()
        case .timer(let slot, let token):
            timers[slot]?.fire(token)
        }
    }
}

/// One cancellable action on a `VirtualTimeScheduler`.
@usableFromInline
final class VirtualScheduledAction: Cancelable, @unchecked Sendable {
    @usableFromInline var action: (() -> Void)?

    // Not counted in LiveResources: it is the scheduler's queue entry; the work it holds is
    // released on dispose even though the entry stays queued until its time.
    @inlinable
    init(_ action: @escaping () -> Void) {
        self.action = action
    }

    @inlinable
    var isDisposed: Bool { action == nil }

    @inlinable
    func run() {
        let a = action
        action = nil
        a?()
    }

    @inlinable
    func dispose() { action = nil }
}

/// A timer slot of a `VirtualTimeScheduler`.
@usableFromInline
final class VirtualTimer: SchedulerTimer, @unchecked Sendable {
    @usableFromInline weak var scheduler: VirtualTimeScheduler?
    @usableFromInline let slot: Int
    @usableFromInline var handler: ((UInt64) -> Void)?
    /// The scheduler-unique key of the pending arm; 0 when disarmed.
    @usableFromInline var pendingKey: UInt64 = 0
    /// The owner's token for the pending arm.
    @usableFromInline var pendingToken: UInt64 = 0

    @inlinable
    init(scheduler: VirtualTimeScheduler, slot: Int, handler: @escaping (UInt64) -> Void) {
        self.scheduler = scheduler
        self.slot = slot
        self.handler = handler
        LiveResources.increment()
    }

    deinit { LiveResources.decrement() }

    @inlinable
    func arm(at deadline: Int64, token: UInt64) {
        guard handler != nil, let scheduler else { return }
        let key = scheduler.nextToken
        scheduler.nextToken &+= 1
        pendingKey = key
        pendingToken = token
        scheduler.push(time: max(deadline, scheduler.clock), .timer(slot: slot, token: key))
    }

    @inlinable
    func disarm() { pendingKey = 0 }

    @inlinable
    func invalidate() {
        guard handler != nil else { return }
        pendingKey = 0
        handler = nil
        scheduler?.release(slot: slot)
    }

    @inlinable
    func fire(_ key: UInt64) {
        guard key != 0, key == pendingKey, let handler else { return }   // stale entry
        pendingKey = 0
        handler(pendingToken)
    }
}
