import Dispatch
@testable import Reactive
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The bounded multi-producer ring behind `observeOn`: ticket order, the overflow path when
/// full, gaps, and cleanup of messages never popped.
@Suite("TicketRing")
struct TicketRingTests {
    /// Shares one ring (a non-copyable value) between threads.
    final class Box: @unchecked Sendable {
        let ring: TicketRing<Int>
        init(capacity: Int, stallTimeout: Int64 = TicketRing<Int>.defaultStallTimeout) {
            ring = TicketRing(capacity: capacity, stallTimeout: stallTimeout)
        }
    }

    @Test("capacity is rounded up to a power of two, at least 2")
    func capacityRounding() {
        #expect(TicketRing<Int>(capacity: 0).capacity == 2)
        #expect(TicketRing<Int>(capacity: 2).capacity == 2)
        #expect(TicketRing<Int>(capacity: 5).capacity == 8)
        #expect(TicketRing<Int>(capacity: 1024).capacity == 1024)
    }

    @Test("within capacity, pushes and pops wrap around the ring many times without overflow")
    func steadyStateNoOverflow() {
        let ring = TicketRing<Int>(capacity: 4)
        var popped: [Int] = []
        for round in 0..<1_000 {
            for i in 0..<3 { ring.push(round * 3 + i) }
            while let value = ring.pop() { popped.append(value) }
        }
        #expect(popped == Array(0..<3_000))
        #expect(ring.overflowCount.load(ordering: .relaxed) == 0)
        #expect(ring.pop() == nil)
    }

    @Test("a full ring overflows into nodes; pops stay in push order across ring and overflow")
    func overflowKeepsOrder() {
        let ring = TicketRing<Int>(capacity: 4)
        for i in 0..<10 { ring.push(i) }
        #expect(ring.overflowCount.load(ordering: .relaxed) == 6)
        var popped: [Int] = []
        for _ in 0..<5 { popped.append(ring.pop()!) }
        for i in 10..<20 { ring.push(i) }   // the consumer is 5+ behind: all overflow
        while let value = ring.pop() { popped.append(value) }
        #expect(popped == Array(0..<20))
        // Once drained, the ring is used again.
        let overflowed = ring.overflowCount.load(ordering: .relaxed)
        for i in 20..<24 { ring.push(i) }
        #expect(ring.overflowCount.load(ordering: .relaxed) == overflowed)
        for i in 20..<24 { #expect(ring.pop() == i) }
        #expect(ring.pop() == nil)
    }

    @Test("a ticket taken but not stored stops pop until it is stored, in the ring or in overflow")
    func gapStopsPop() {
        let ring = TicketRing<Int>(capacity: 2)
        let first = ring.takeTicket()
        ring.push(1)
        ring.push(2)   // ticket 2 finds slot 0 still free for ticket 0: overflow
        #expect(ring.overflowCount.load(ordering: .relaxed) == 1)
        #expect(ring.pop() == nil)
        #expect(ring.pop() == nil)
        ring.store(0, ticket: first)
        #expect(ring.pop() == 0)
        #expect(ring.pop() == 1)
        #expect(ring.pop() == 2)
        #expect(ring.pop() == nil)

        // The same with the late ticket's slot occupied, so that it overflows too.
        let late = ring.takeTicket()   // ticket 3 → slot 1, free
        ring.push(4)                   // slot 0, free
        ring.push(5)                   // slot 1 free only for ticket 3: overflow
        let overflowed = ring.overflowCount.load(ordering: .relaxed)
        #expect(ring.pop() == nil)
        ring.store(3, ticket: late)
        #expect(ring.overflowCount.load(ordering: .relaxed) == overflowed)
        #expect(ring.pop() == 3)
        #expect(ring.pop() == 4)
        #expect(ring.pop() == 5)
        #expect(ring.pop() == nil)
    }

    @Test("destroying the ring destroys messages never popped: in slots, in overflow nodes, parked")
    func deinitReleasesEverything() {
        final class Counter: @unchecked Sendable { var value = 0 }
        final class Tracked {
            let counter: Counter
            init(_ counter: Counter) { self.counter = counter }
            deinit { counter.value += 1 }
        }
        let counter = Counter()
        do {
            let ring = TicketRing<Tracked>(capacity: 4)
            for _ in 0..<10 { ring.push(Tracked(counter)) }     // 4 in slots, 6 overflow
            for _ in 0..<5 { _ = ring.pop() }                   // 4 from slots, 1 from overflow
            #expect(counter.value == 5)
            ring.push(Tracked(counter))   // ticket 10: slot 2 still waits for ticket 6 → overflow
            // Left: tickets 5–9 parked by the consumer, ticket 10 on the overflow stack.
        }
        #expect(counter.value == 11)
        do {
            let ring = TicketRing<Tracked>(capacity: 8)
            for _ in 0..<6 { ring.push(Tracked(counter)) }      // all in slots
            _ = ring.pop()
        }
        #expect(counter.value == 17)
    }

    @Test("many producers, one consumer popping meanwhile, tiny ring: each message once, per-producer order")
    func manyProducers() {
        let producers = 6, perProducer = 30_000
        let box = Box(capacity: 8)
        let total = producers * perProducer
        let received = Mutex<[Int]>([])
        // Thread `producers` is the consumer; it polls, since nothing here signals it.
        runConcurrently(threads: producers + 1) { t in
            if t < producers {
                for i in 0..<perProducer { box.ring.push(t * 1_000_000 + i) }
                return
            }
            var values: [Int] = []
            values.reserveCapacity(total)
            let deadline = monotonicNow() + 60_000_000_000
            while values.count < total && monotonicNow() < deadline {
                if let value = box.ring.pop() { values.append(value) } else { sched_yield() }
            }
            received.withLock { $0 = values }
        }
        let values = received.withLock { $0 }
        #expect(values.count == total)
        #expect(perProducerComplete(values, producers: producers, perProducer: perProducer))
        #expect(box.ring.pop() == nil)
    }

    @Test("a producer facing a full ring waits while the consumer takes messages: no overflow")
    func fullRingWaitsForConsumer() {
        // A stall timeout far beyond the test's length: any overflow here would be a producer
        // that failed to wait.
        let box = Box(capacity: 8, stallTimeout: 60_000_000_000)
        let producers = 3, perProducer = 20_000, total = producers * perProducer
        let received = Mutex<[Int]>([])
        runConcurrently(threads: producers + 1) { t in
            if t < producers {
                for i in 0..<perProducer { box.ring.push(t * 1_000_000 + i) }
                return
            }
            var values: [Int] = []
            while values.count < total {
                if let value = box.ring.pop() { values.append(value) } else { sched_yield() }
                if values.count % 1_000 == 0 { sched_yield() }   // let the ring fill up
            }
            received.withLock { $0 = values }
        }
        let values = received.withLock { $0 }
        #expect(box.ring.overflowCount.load(ordering: .relaxed) == 0)
        #expect(perProducerComplete(values, producers: producers, perProducer: perProducer))
    }

    @Test("a push from the consumer's own thread into a full ring overflows at once")
    func consumerThreadDoesNotWait() {
        let ring = TicketRing<Int>(capacity: 2, stallTimeout: 60_000_000_000)
        let start = monotonicNow()
        ring.beginConsuming()
        for i in 0..<10 { ring.push(i) }
        ring.endConsuming()
        #expect(monotonicNow() - start < 10_000_000_000)
        #expect(ring.overflowCount.load(ordering: .relaxed) == 8)
        for i in 0..<10 { #expect(ring.pop() == i) }
        #expect(ring.pop() == nil)
    }

    @Test("a stalled consumer costs one stall timeout, then full-ring pushes overflow at once until it takes a message")
    func stallCostsOneTimeout() {
        let timeout: Int64 = 50_000_000
        let ring = TicketRing<Int>(capacity: 2, stallTimeout: timeout)
        var start = monotonicNow()
        for i in 0..<22 { ring.push(i) }   // 20 overflow; waiting for each would take 1 s
        var elapsed = monotonicNow() - start
        #expect(elapsed >= timeout)
        #expect(elapsed < 10 * timeout)
        #expect(ring.overflowCount.load(ordering: .relaxed) == 20)
        #expect(ring.pop() == 0)
        // The consumer moved: the next producer to find the ring full waits again.
        start = monotonicNow()
        ring.push(22)
        elapsed = monotonicNow() - start
        #expect(elapsed >= timeout)
        for i in 1...22 { #expect(ring.pop() == i) }
        #expect(ring.pop() == nil)
    }
}
