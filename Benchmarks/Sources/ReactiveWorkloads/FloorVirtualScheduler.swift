/// The W5 floor's clock: a plain binary min-heap of (due time, order, token) entries and one
/// timer callback, written without any framework. Re-arming pushes an entry; an entry whose
/// token is no longer current is ignored by the callback (the same generation rule the
/// operators use).
final class FloorVirtualScheduler {
    private struct Entry {
        var time: Int64
        var order: UInt64
        var token: UInt64

        @inline(__always)
        func runsBefore(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && order < other.order)
        }
    }

    private var heap: ContiguousArray<Entry> = []
    private var nextOrder: UInt64 = 0
    private(set) var now: Int64 = 0
    /// Called with an entry's token when it comes due.
    var onTimer: (UInt64) -> Void = { _ in }

    init() {}

    func arm(at time: Int64, token: UInt64) {
        heap.append(Entry(time: max(time, now), order: nextOrder, token: token))
        nextOrder &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].runsBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popMin() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            let count = heap.count
            while true {
                let left = 2 * parent + 1
                if left >= count { break }
                var smallest = left
                if left + 1 < count, heap[left + 1].runsBefore(heap[left]) { smallest = left + 1 }
                guard heap[smallest].runsBefore(heap[parent]) else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }

    /// Runs every entry due up to `time`, moving the clock to each; then sets it to `time`.
    func advance(to time: Int64) {
        while let top = heap.first, top.time <= time {
            let entry = popMin()
            if entry.time > now { now = entry.time }
            onTimer(entry.token)
        }
        if time > now { now = time }
    }
}
