import Synchronization

/// A lock-free multi-producer, single-consumer FIFO queue: a bounded ring of slots with a
/// sequence number per slot (after Dmitry Vyukov's bounded queue), plus an overflow list
/// for the moments when the ring is full.
///
/// - **Order**: every `push` takes a ticket from one counter (one `wrappingAdd`) and `pop`
///   returns messages strictly in ticket order. Messages pushed by one thread come out in the
///   order they were pushed, and a push that happens-before another comes out before it.
/// - **Storage**: ticket `t` is stored in slot `t % capacity` when, at the moment its producer
///   looks, the consumer has already taken ticket `t - capacity` out of that slot — that is,
///   when fewer than `capacity` messages are waiting ahead of it. Otherwise (the ring is full)
///   it goes into an overflow node: one allocation, pushed onto a Treiber stack, which the
///   consumer moves into a table keyed by ticket. Nothing is lost and no producer ever waits;
///   while the consumer keeps up to within `capacity` messages, `push` and `pop` allocate
///   nothing.
/// - **Gaps**: a ticket that has been taken but whose message is not stored yet makes `pop`
///   return nil, even when later tickets are ready. Pair each `push` with a signal the
///   consumer waits for (`ObserveOnSink` counts pushes in its `wip` word) so the consumer looks
///   again after the message is stored.
/// - **Threads**: `push` from any number of threads at once; `pop` from one thread at a time,
///   with a happens-before edge from one consumer to the next (the caller's drain protocol).
///
/// Costs: `push` is one `wrappingAdd`, one acquiring load and one releasing store; `pop` is
/// one acquiring load and one releasing store. Memory: `capacity` (rounded up to a power of
/// two) × (8 bytes + `MemoryLayout<Message>.stride`), allocated by `init`.
@usableFromInline
struct TicketRing<Message>: ~Copyable {
    /// A message that did not fit into the ring, with its ticket.
    @usableFromInline
    final class OverflowNode {
        @usableFromInline let ticket: Int
        @usableFromInline let message: Message
        @usableFromInline var next: Unmanaged<OverflowNode>?

        @inlinable
        init(ticket: Int, message: Message) {
            self.ticket = ticket
            self.message = message
        }
    }

    /// State only the consumer touches.
    @usableFromInline
    struct ConsumerState {
        /// The next ticket `pop` returns.
        @usableFromInline var head = 0
        /// Overflow messages taken off the stack and not returned yet, by ticket.
        @usableFromInline var parked: [Int: Message] = [:]

        @inlinable
        init() {}
    }

    /// Number of slots minus one (the capacity is a power of two).
    @usableFromInline let mask: Int
    /// The next ticket to hand out.
    @usableFromInline let tail = Atomic<Int>(0)
    /// Overflow nodes, newest first.
    @usableFromInline let overflow = Atomic<Unmanaged<OverflowNode>?>(nil)
    /// Messages that went into overflow nodes so far (diagnostics and tests).
    @usableFromInline let overflowCount = Atomic<Int>(0)
    /// Per slot: `t` when the slot is free for ticket `t`, `t + 1` when it holds ticket `t`.
    @usableFromInline let sequences: UnsafeMutablePointer<Atomic<Int>>
    /// Per slot: the message, initialised exactly while the slot holds a ticket.
    @usableFromInline let messages: UnsafeMutablePointer<Message>
    @usableFromInline let consumer: UnsafeMutablePointer<ConsumerState>

    /// An empty queue whose ring holds `capacity` messages, rounded up to a power of two
    /// (at least 2).
    @inlinable
    init(capacity: Int) {
        var slots = 2
        while slots < capacity { slots <<= 1 }
        mask = slots - 1
        sequences = .allocate(capacity: slots)
        for index in 0..<slots { (sequences + index).initialize(to: Atomic(index)) }
        messages = .allocate(capacity: slots)
        consumer = .allocate(capacity: 1)
        consumer.initialize(to: ConsumerState())
    }

    deinit {
        // No producer or consumer is running any more: destroy what was never popped.
        for index in 0...mask where sequences[index].load(ordering: .acquiring) & mask != index {
            // A free slot's sequence is ≡ its index (mod capacity); a full one's is one more.
            (messages + index).deinitialize(count: 1)
        }
        var node = overflow.exchange(nil, ordering: .acquiring)
        while let n = node {
            node = n.takeUnretainedValue().next
            n.release()
        }
        consumer.deinitialize(count: 1)
        consumer.deallocate()
        messages.deallocate()
        sequences.deinitialize(count: mask + 1)
        sequences.deallocate()
    }

    /// The number of messages the ring holds before pushes overflow.
    @inlinable
    var capacity: Int { mask + 1 }

    /// Appends `message`. Any thread; never waits; allocates only when the ring is full.
    @inlinable
    func push(_ message: consuming Message) {
        store(message, ticket: takeTicket())
    }

    /// The first half of `push`: reserves the message's place in the order. Every ticket
    /// must be passed to `store` exactly once; until then `pop` stops at it.
    @inlinable
    func takeTicket() -> Int {
        tail.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// The second half of `push`: stores the message for `ticket` (from `takeTicket`).
    @inlinable
    func store(_ message: consuming Message, ticket: Int) {
        let index = ticket & mask
        if sequences[index].load(ordering: .acquiring) == ticket {
            (messages + index).initialize(to: message)
            sequences[index].store(ticket &+ 1, ordering: .releasing)
        } else {
            pushOverflow(ticket: ticket, message: message)
        }
    }

    @inlinable
    func pushOverflow(ticket: Int, message: consuming Message) {
        overflowCount.wrappingAdd(1, ordering: .relaxed)
        let node = Unmanaged.passRetained(OverflowNode(ticket: ticket, message: message))
        var top = overflow.load(ordering: .relaxed)
        while true {
            node.takeUnretainedValue().next = top
            let (exchanged, original) = overflow.compareExchange(
                expected: top, desired: node, successOrdering: .releasing, failureOrdering: .relaxed)
            if exchanged { return }
            top = original
        }
    }

    /// The message with the next ticket, or nil when that message is not stored yet.
    /// One consumer at a time.
    @inlinable
    func pop() -> Message? {
        let head = consumer.pointee.head
        let index = head & mask
        let message: Message
        if sequences[index].load(ordering: .acquiring) == head &+ 1 {
            message = (messages + index).move()
        } else if let parked = takeOverflow(head) {
            message = parked
        } else {
            return nil
        }
        // Either way the slot is now free for ticket head + capacity.
        sequences[index].store(head &+ mask &+ 1, ordering: .releasing)
        consumer.pointee.head = head &+ 1
        return message
    }

    /// Ticket `head`'s message from the overflow list, if its producer has stored it there.
    @inlinable
    func takeOverflow(_ head: Int) -> Message? {
        if !consumer.pointee.parked.isEmpty, let message = consumer.pointee.parked.removeValue(forKey: head) {
            return message
        }
        guard overflow.load(ordering: .relaxed) != nil else { return nil }
        var node = overflow.exchange(nil, ordering: .acquiring)
        while let n = node {
            let box = n.takeRetainedValue()
            node = box.next
            consumer.pointee.parked[box.ticket] = box.message
        }
        return consumer.pointee.parked.removeValue(forKey: head)
    }
}
