import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock-free multi-producer, single-consumer FIFO queue: a bounded ring of slots with a
/// sequence number per slot (after Dmitry Vyukov's bounded queue), plus an overflow list
/// for the moments when the ring is full.
///
/// - **Order**: every `push` takes a ticket from one counter (one `wrappingAdd`) and `pop`
///   returns messages strictly in ticket order. Messages pushed by one thread come out in the
///   order they were pushed, and a push that happens-before another comes out before it.
/// - **Storage**: ticket `t` is stored in slot `t % capacity` once the consumer has taken
///   ticket `t - capacity` out of that slot, that is, once fewer than `capacity` messages are
///   waiting ahead of it. While they are not (the ring is full), the producer waits (polling
///   for 50 µs, then sleeping 20 µs between polls) as long as the consumer keeps taking
///   messages; it stores its message in an
///   overflow node instead (one allocation, pushed onto a Treiber stack that the consumer
///   moves into a table keyed by ticket) when
///   - the producer is the consumer's own thread (between `beginConsuming` and
///     `endConsuming`: a re-entrant push could never see the slot freed), or
///   - the consumer has taken nothing for `stallTimeout` (it is not running: not started yet,
///     its thread busy elsewhere, or waiting for this producer); the consumer is then marked
///     stalled at that ticket, and until it takes the next message further producers that
///     find the ring full use overflow nodes at once, so a stall costs one `stallTimeout`,
///     not one per message.
///
///   Nothing is lost or reordered and nothing waits unboundedly. While the consumer keeps up
///   (or keeps running), `push` and `pop` allocate nothing.
/// - **Gaps**: a ticket that has been taken but whose message is not stored yet makes `pop`
///   return nil, even when later tickets are ready. Pair each `push` with a signal the
///   consumer waits for (`ObserveOnSink` counts pushes in its `wip` word) so the consumer looks
///   again after the message is stored.
/// - **Threads**: `push` from any number of threads at once; `pop` from one thread at a time,
///   with a happens-before edge from one consumer to the next (the caller's drain protocol).
///
/// Costs: `push` into a free slot is one `wrappingAdd`, one acquiring load and one releasing
/// store; `pop` is one acquiring load, one releasing store and one relaxed store. Memory:
/// `capacity` (rounded up to a power of two) × (8 bytes + `MemoryLayout<Message>.stride`),
/// plus a 128-byte ticket counter and two small blocks, allocated by `init`.
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

    /// What producers read about the consumer, apart from the slots (its own cache lines).
    @usableFromInline
    struct ConsumerSignals: ~Copyable {
        /// The consumer's next ticket, stored after every `pop` that returns a message.
        @usableFromInline let head = Atomic<Int>(0)
        /// The head at which a waiting producer gave up (-1: none).
        @usableFromInline let stalledAt = Atomic<Int>(-1)
        /// The consuming thread (`pthread_self`) between `beginConsuming` and
        /// `endConsuming`, else 0.
        @usableFromInline let thread = Atomic<UInt>(0)

        @inlinable
        init() {}
    }

    /// How long a producer facing a full ring waits for the consumer to take a message
    /// before it uses an overflow node.
    @usableFromInline static var defaultStallTimeout: Int64 { 10_000_000 }   // 10 ms
    /// How long a waiting producer polls before it starts sleeping (20 µs) between polls.
    @usableFromInline static var spinTime: Int64 { 50_000 }   // 50 µs

    /// Number of slots minus one (the capacity is a power of two).
    @usableFromInline let mask: Int
    /// The next ticket to hand out.
    @usableFromInline let tail = IsolatedCounter(0)
    /// Overflow nodes, newest first.
    @usableFromInline let overflow = Atomic<Unmanaged<OverflowNode>?>(nil)
    /// Messages that went into overflow nodes so far (diagnostics and tests).
    @usableFromInline let overflowCount = Atomic<Int>(0)
    /// Per slot: `t` when the slot is free for ticket `t`, `t + 1` when it holds ticket `t`.
    @usableFromInline let sequences: UnsafeMutablePointer<Atomic<Int>>
    /// Per slot: the message, initialised exactly while the slot holds a ticket.
    @usableFromInline let messages: UnsafeMutablePointer<Message>
    @usableFromInline let consumer: UnsafeMutablePointer<ConsumerState>
    @usableFromInline let signals: UnsafeMutablePointer<ConsumerSignals>
    /// Nanoseconds without consumer progress after which a waiting producer overflows.
    @usableFromInline let stallTimeout: Int64

    /// An empty queue whose ring holds `capacity` messages, rounded up to a power of two
    /// (at least 2); `stallTimeout` in nanoseconds (tests shorten or lengthen it).
    @inlinable
    init(capacity: Int, stallTimeout: Int64 = TicketRing.defaultStallTimeout) {
        self.stallTimeout = stallTimeout
        var slots = 2
        while slots < capacity { slots <<= 1 }
        mask = slots - 1
        sequences = .allocate(capacity: slots)
        for index in 0..<slots { (sequences + index).initialize(to: Atomic(index)) }
        messages = .allocate(capacity: slots)
        consumer = .allocate(capacity: 1)
        consumer.initialize(to: ConsumerState())
        signals = .allocate(capacity: 1)
        signals.initialize(to: ConsumerSignals())
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
        signals.deinitialize(count: 1)
        signals.deallocate()
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
        tail.takeNext()
    }

    /// The second half of `push`: stores the message for `ticket` (from `takeTicket`).
    @inlinable
    func store(_ message: consuming Message, ticket: Int) {
        let index = ticket & mask
        if sequences[index].load(ordering: .acquiring) == ticket || waitForSlot(index, ticket: ticket) {
            (messages + index).initialize(to: message)
            sequences[index].store(ticket &+ 1, ordering: .releasing)
        } else {
            pushOverflow(ticket: ticket, message: message)
        }
    }

    /// Waits while the ring is full and the consumer keeps taking messages; true when slot
    /// `index` became free for `ticket`, false when the message must overflow (see the type's
    /// documentation).
    @usableFromInline
    func waitForSlot(_ index: Int, ticket: Int) -> Bool {
        let signals = self.signals
        if signals.pointee.thread.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self())) {
            return false
        }
        var seen = signals.pointee.head.load(ordering: .relaxed)
        if signals.pointee.stalledAt.load(ordering: .relaxed) == seen { return false }
        let start = monotonicNow()
        var progressAt = start
        var polls = 0
        while sequences[index].load(ordering: .acquiring) != ticket {
            polls += 1
            if polls & 63 != 0 { continue }
            let now = monotonicNow()
            // Spin first: a running consumer frees a slot within microseconds. Then sleep
            // between polls, so that a consumer waiting for this CPU gets it (a yield does
            // not hand the CPU over reliably).
            if now - start >= TicketRing.spinTime { usleep(20) }
            let head = signals.pointee.head.load(ordering: .relaxed)
            if head != seen {
                seen = head
                progressAt = now
            } else if now - progressAt >= stallTimeout {
                signals.pointee.stalledAt.store(seen, ordering: .relaxed)
                return false
            }
        }
        return true
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
        signals.pointee.head.store(head &+ 1, ordering: .relaxed)
        return message
    }

    /// Whether `pop` would return a message now (or, for an overflow list that is not
    /// empty, might). One consumer at a time.
    @inlinable
    var nextMayBeReady: Bool {
        let head = consumer.pointee.head
        return sequences[head & mask].load(ordering: .acquiring) == head &+ 1
            || !consumer.pointee.parked.isEmpty
            || overflow.load(ordering: .relaxed) != nil
    }

    /// Marks the calling thread as the consumer until `endConsuming`: a push from it into a
    /// full ring overflows at once instead of waiting for itself.
    @inlinable
    func beginConsuming() {
        signals.pointee.thread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
    }

    /// Ends `beginConsuming`.
    @inlinable
    func endConsuming() {
        signals.pointee.thread.store(0, ordering: .relaxed)
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
