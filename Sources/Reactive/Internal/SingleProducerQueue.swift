import Synchronization

/// An unbounded single-producer / single-consumer queue of fixed-size chunks.
///
/// `observeOn` hands events from the upstream (serial by the event grammar: one producer at
/// a time, each send happening-after the previous one) to its drain job (one consumer at a
/// time). A send writes one slot and publishes the chunk's count with a release store: no
/// allocation except one chunk per `chunkCapacity` events, no read-modify-write, no node per
/// event (the `SerialGate` stack allocated one per event: measured 1 alloc/event in W4).
@usableFromInline
final class SingleProducerQueue<Element>: @unchecked Sendable {
    @usableFromInline
    final class Chunk {
        @usableFromInline static var capacity: Int { 256 }
        @usableFromInline let slots: UnsafeMutablePointer<Element>
        /// Slots written and published by the producer.
        @usableFromInline let published = Atomic<Int>(0)
        @usableFromInline let next = Atomic<Unmanaged<Chunk>?>(nil)

        @inlinable
        init() {
            slots = .allocate(capacity: Self.capacity)
        }

        deinit { slots.deallocate() }
    }

    // Producer side.
    @usableFromInline @exclusivity(unchecked) var tail: Chunk
    @usableFromInline @exclusivity(unchecked) var tailCount = 0
    // Consumer side.
    @usableFromInline @exclusivity(unchecked) var head: Chunk
    @usableFromInline @exclusivity(unchecked) var headIndex = 0

    @inlinable
    init() {
        let first = Chunk()
        tail = first
        head = first
    }

    deinit {
        // No producer or consumer is left: release what was never consumed.
        while dequeue() != nil {}
    }

    /// Appends `element` (producer only).
    @inlinable
    func enqueue(_ element: Element) {
        if tailCount == Chunk.capacity {
            let chunk = Chunk()
            tail.next.store(Unmanaged.passRetained(chunk), ordering: .releasing)
            tail = chunk
            tailCount = 0
        }
        (tail.slots + tailCount).initialize(to: element)
        tailCount += 1
        tail.published.store(tailCount, ordering: .releasing)
    }

    /// Removes the oldest element, or returns nil when none is published (consumer only).
    @inlinable
    func dequeue() -> Element? {
        while true {
            if headIndex < head.published.load(ordering: .acquiring) {
                let element = (head.slots + headIndex).move()
                headIndex += 1
                return element
            }
            guard headIndex == Chunk.capacity, let next = head.next.load(ordering: .acquiring) else { return nil }
            // The producer no longer touches the old chunk: it stored `next` as its last act there.
            head = next.takeRetainedValue()
            headIndex = 0
        }
    }
}
