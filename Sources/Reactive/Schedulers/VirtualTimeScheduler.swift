/// A scheduler whose clock only moves when it is told to: tests and replay.
///
/// Scheduled work is kept in a binary heap of plain values ordered by (due time, order of
/// scheduling). Actions live in a slot table and timers in another; a heap entry names its
/// slot and carries a key, so swapping entries copies no references and an entry whose key no
/// longer matches its slot is stale and skipped. Timer slots from `makeTimer` are re-armed by
/// pushing one entry (no allocation), and an invalidated timer is released at once rather
/// than when its stale entries come due. While an item runs, the first entry it schedules (a
/// replay or an operator re-arming its timer from the timer's own handler) is held beside the
/// heap and runs next without entering it when nothing queued comes before it. Everything
/// runs on the thread that advances the clock; drive one instance from one thread at a time.
open class VirtualTimeScheduler: SchedulerType, @unchecked Sendable {
    @usableFromInline
    @frozen
    struct Entry {
        @usableFromInline var time: Int64
        @usableFromInline var order: UInt64
        /// Slot in `actions` (when `isTimer` is false) or in `timers`.
        @usableFromInline var slot: Int32
        @usableFromInline var isTimer: Bool
        /// Must equal the slot's current key, else the entry is stale.
        @usableFromInline var key: UInt64

        @inlinable
        init(time: Int64, order: UInt64, slot: Int32, isTimer: Bool, key: UInt64) {
            self.time = time
            self.order = order
            self.slot = slot
            self.isTimer = isTimer
            self.key = key
        }

        @inlinable
        func runsBefore(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && order < other.order)
        }
    }

    // All state is touched only by the driving thread: no dynamic exclusivity checks.
    @usableFromInline @exclusivity(unchecked) var heap: ContiguousArray<Entry> = []
    @usableFromInline @exclusivity(unchecked) var nextOrder: UInt64 = 0
    @usableFromInline @exclusivity(unchecked) var clock: Int64
    @usableFromInline @exclusivity(unchecked) var running = false
    @usableFromInline @exclusivity(unchecked) var actions: ContiguousArray<VirtualScheduledAction?> = []
    @usableFromInline @exclusivity(unchecked) var freeActionSlots: [Int32] = []
    /// Live timers by slot; a slot is reused after its timer is invalidated. Keys are unique
    /// per scheduler, so an old entry never matches a slot's new timer.
    @usableFromInline @exclusivity(unchecked) var timers: ContiguousArray<VirtualTimer?> = []
    @usableFromInline @exclusivity(unchecked) var freeTimerSlots: [Int32] = []
    @usableFromInline @exclusivity(unchecked) var nextKey: UInt64 = 1
    /// The first entry scheduled by the item that is running, kept out of the heap: the
    /// pending work is the heap and this entry, and `takeNext` takes the earlier of the two,
    /// so items run in the heap's order. Most often it is the next item to run (a timer
    /// re-armed from its handler for the next frame), which then costs no heap insertion and
    /// removal. Only set while `running`, and empty again whenever a loop ends.
    @usableFromInline @exclusivity(unchecked) var held: Entry?

    /// Creates a scheduler whose clock starts at `initialClock` (ns).
    public init(initialClock: Int64 = 0) {
        clock = initialClock
    }

    /// The virtual clock, in nanoseconds.
    @inlinable
    public final var now: Int64 { clock }

    /// Whether work is pending.
    public final var hasPendingWork: Bool { !heap.isEmpty || held != nil }

    /// Runs `action` at the current virtual time, after work already due now.
    @discardableResult
    public final func schedule(_ action: @escaping () -> Void) -> Disposable {
        scheduleAbsolute(clock, action)
    }

    /// Runs `action` at `now + dueTime`.
    @discardableResult
    public final func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> Disposable {
        scheduleAbsolute(clock + max(dueTime.nanoseconds, 0), action)
    }

    /// Runs `action` at absolute virtual time `time` (ns).
    @discardableResult
    public final func scheduleAbsolute(_ time: Int64, _ action: @escaping () -> Void) -> Disposable {
        let item = VirtualScheduledAction(action)
        let slot: Int32
        if let free = freeActionSlots.popLast() {
            slot = free
            actions[Int(free)] = item
        } else {
            slot = Int32(actions.count)
            actions.append(item)
        }
        push(Entry(time: max(time, clock), order: 0, slot: slot, isTimer: false, key: 0))
        return item
    }

    /// A reusable timer slot.
    public final func makeTimer(_ handler: @escaping (UInt64) -> Void) -> SchedulerTimer {
        let slot: Int32
        if let free = freeTimerSlots.popLast() {
            slot = free
        } else {
            slot = Int32(timers.count)
            timers.append(nil)
        }
        let timer = VirtualTimer(scheduler: self, slot: slot, handler: handler)
        timers[Int(slot)] = timer
        return timer
    }

    @usableFromInline
    final func release(timerSlot slot: Int32) {
        timers[Int(slot)] = nil
        freeTimerSlots.append(slot)
    }

    /// A fresh key for a timer arm.
    @inlinable
    final func makeKey() -> UInt64 {
        let key = nextKey
        nextKey &+= 1
        return key
    }

    /// Queues `entry` in scheduling order (held back when it is the first while an item runs).
    @inlinable
    final func push(_ entry: Entry) {
        var entry = entry
        entry.order = nextOrder
        nextOrder &+= 1
        if running && held == nil {
            held = entry
        } else {
            insert(entry)
        }
    }

    @inlinable
    final func insert(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) >> 1
            guard heap[child].runsBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable
    final func popMin() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        let n = heap.count
        if n > 0 {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < n else { break }
                let right = left + 1
                var smallest = left
                if right < n, heap[right].runsBefore(heap[left]) { smallest = right }
                guard heap[smallest].runsBefore(heap[parent]) else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }

    /// Removes and returns the next item due by `limit`: the held entry or the heap's first,
    /// whichever runs first; nil when neither is due. The held entry, when not taken, goes
    /// into the heap.
    @inlinable
    final func takeNext(upTo limit: Int64) -> Entry? {
        if let entry = held {
            held = nil
            if entry.time <= limit, heap.first.map({ entry.runsBefore($0) }) ?? true { return entry }
            insert(entry)
        }
        guard let top = heap.first, top.time <= limit else { return nil }
        return popMin()
    }

    /// Runs everything due up to `time` (inclusive), in order, moving the clock to each
    /// item's due time; then sets the clock to `time`.
    public final func advance(to time: Int64) {
        precondition(!running, "VirtualTimeScheduler.advance called re-entrantly")
        running = true
        defer { running = false }
        while let entry = takeNext(upTo: time) {
            if entry.time > clock { clock = entry.time }
            run(entry)
        }
        if time > clock { clock = time }
    }

    /// Advances the clock by `interval`.
    public final func advance(by interval: RxTimeInterval) {
        advance(to: clock + interval.nanoseconds)
    }

    /// Runs all pending work (including work it schedules) until none is left or the clock
    /// would pass `limit`.
    public final func run(until limit: Int64 = .max) {
        precondition(!running, "VirtualTimeScheduler.run called re-entrantly")
        running = true
        defer { running = false }
        while let entry = takeNext(upTo: limit) {
            if entry.time > clock { clock = entry.time }
            run(entry)
        }
    }

    @inlinable
    final func run(_ entry: Entry) {
        let slot = Int(entry.slot)
        if entry.isTimer {
            timers[slot]?.fire(entry.key)
        } else {
            let action = actions[slot]
            actions[slot] = nil
            freeActionSlots.append(entry.slot)
            action?.run()
        }
    }
}

/// One cancellable action on a `VirtualTimeScheduler`.
@usableFromInline
final class VirtualScheduledAction: Cancelable, @unchecked Sendable {
    // Only the driving thread runs or disposes it (the scheduler is single-threaded).
    @usableFromInline @exclusivity(unchecked) var action: (() -> Void)?

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
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    /// Strong, and released on `invalidate()`: the scheduler's slot table and this reference
    /// form a cycle that invalidation (every owner's disposal) ends. A weak reference would
    /// give the scheduler a side-table refcount and put its retains on the slow path.
    @usableFromInline @exclusivity(unchecked) var scheduler: VirtualTimeScheduler?
    @usableFromInline let slot: Int32
    @usableFromInline @exclusivity(unchecked) var handler: ((UInt64) -> Void)?
    /// The scheduler-unique key of the pending arm; 0 when disarmed.
    @usableFromInline @exclusivity(unchecked) var pendingKey: UInt64 = 0
    /// The owner's token for the pending arm.
    @usableFromInline @exclusivity(unchecked) var pendingToken: UInt64 = 0

    @inlinable
    init(scheduler: VirtualTimeScheduler, slot: Int32, handler: @escaping (UInt64) -> Void) {
        self.scheduler = scheduler
        self.slot = slot
        self.handler = handler
    }

    @inlinable
    func arm(at deadline: Int64, token: UInt64) {
        guard handler != nil, let scheduler else { return }
        let key = scheduler.makeKey()
        pendingKey = key
        pendingToken = token
        scheduler.push(.init(time: max(deadline, scheduler.clock), order: 0, slot: slot, isTimer: true, key: key))
    }

    @inlinable
    func disarm() { pendingKey = 0 }

    @inlinable
    func invalidate() {
        guard handler != nil else { return }
        pendingKey = 0
        handler = nil
        scheduler?.release(timerSlot: slot)
        scheduler = nil
    }

    @inlinable
    func fire(_ key: UInt64) {
        guard key != 0, key == pendingKey, let handler else { return }   // stale entry
        pendingKey = 0
        handler(pendingToken)
    }
}
