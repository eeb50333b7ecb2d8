import Reactive
import Synchronization

/// A reusable one-shot timer on an `InputLoop`'s heap. Arming from the loop thread is a heap
/// sift; from another thread it is a job that does the same.
final class LoopTimer: SchedulerTimer, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    private let loop: InputLoop
    /// Released on invalidation (on the loop thread).
    private var handler: ((UInt64) -> Void)?
    private let invalidated = Atomic<Bool>(false)
    /// Invalidate after the first fire (`schedule(after:)`).
    var oneShot = false
    // Loop thread only:
    var deadline = Int64.min
    var token: UInt64 = 0
    var heapIndex = -1

    init(loop: InputLoop, handler: @escaping (UInt64) -> Void) {
        self.loop = loop
        self.handler = handler
    }

    var isInvalidated: Bool { invalidated.load(ordering: .acquiring) }

    func arm(at deadline: Int64, token: UInt64) {
        if loop.isCurrent {
            loop.arm(self, at: deadline, token: token)
        } else {
            loop.enqueue { [self] in loop.arm(self, at: deadline, token: token) }
        }
    }

    func disarm() {
        if loop.isCurrent {
            loop.disarm(self)
        } else {
            loop.enqueue { [self] in loop.disarm(self) }
        }
    }

    func invalidate() {
        if invalidated.exchange(true, ordering: .acquiringAndReleasing) { return }
        if loop.isCurrent {
            loop.disarm(self)
            handler = nil
        } else {
            loop.enqueue { [self] in
                loop.disarm(self)
                handler = nil
            }
        }
    }

    /// Loop thread: the deadline passed.
    func fire() {
        guard !isInvalidated, let handler else { return }
        if oneShot { invalidate() }
        handler(token)
    }
}

/// The loop's timers as a binary min-heap by deadline; each timer knows its index (`heapIndex`,
/// -1 when not in the heap), so re-arming or removing one is a sift, not a search. Loop thread
/// only (it lives in `InputLoop` and is touched from its thread alone).
struct TimerHeap {
    private var timers: [LoopTimer] = []

    /// The timer with the earliest deadline.
    var first: LoopTimer? { timers.first }

    var isEmpty: Bool { timers.isEmpty }

    /// Sets `timer`'s deadline and token, and puts it in the heap or moves it to its new place.
    mutating func arm(_ timer: LoopTimer, at deadline: Int64, token: UInt64) {
        timer.token = token
        let later = deadline > timer.deadline
        timer.deadline = deadline
        if timer.heapIndex < 0 {
            timer.heapIndex = timers.count
            timers.append(timer)
            siftUp(timers.count - 1)
        } else if later {
            siftDown(timer.heapIndex)
        } else {
            siftUp(timer.heapIndex)
        }
    }

    /// Takes `timer` out of the heap (nothing when it is not in it).
    mutating func remove(_ timer: LoopTimer) {
        let i = timer.heapIndex
        guard i >= 0 else { return }
        let last = timers.count - 1
        if i != last {
            timers.swapAt(i, last)
            timers[i].heapIndex = i
        }
        timers.removeLast()
        timer.heapIndex = -1
        if i < timers.count {
            siftDown(i)
            siftUp(i)
        }
    }

    /// Empties the heap (the loop's end).
    mutating func removeAll() {
        for timer in timers { timer.heapIndex = -1 }
        timers = []
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard timers[i].deadline < timers[parent].deadline else { break }
            timers.swapAt(i, parent)
            timers[i].heapIndex = i
            timers[parent].heapIndex = parent
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var least = i
            if l < timers.count && timers[l].deadline < timers[least].deadline { least = l }
            if r < timers.count && timers[r].deadline < timers[least].deadline { least = r }
            if least == i { return }
            timers.swapAt(i, least)
            timers[i].heapIndex = i
            timers[least].heapIndex = least
            i = least
        }
    }
}
