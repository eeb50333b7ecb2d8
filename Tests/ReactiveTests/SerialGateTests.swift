@testable import Reactive
import Synchronization
import ReactiveTesting
import Testing

/// The lock-free `SerialGate` under contention: serial handling, FIFO per producer, no loss.
@Suite("SerialGate", .ownLiveResources)
struct SerialGateTests {
    /// Shares one gate (a non-copyable value) between threads.
    final class Box: @unchecked Sendable {
        let gate = SerialGate<Int>()
        let inFlight = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        // Touched only inside the gate.
        var handled: [Int] = []

        func send(_ message: Int) {
            gate.send(message) { m in
                if inFlight.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue > 1 {
                    overlaps.wrappingAdd(1, ordering: .relaxed)
                }
                handled.append(m)
                inFlight.wrappingSubtract(1, ordering: .acquiringAndReleasing)
            }
        }
    }

    @Test("several producers: every message handled once, never concurrently, FIFO per producer")
    func contention() {
        let box = Box()
        let producers = 4, perProducer = 20_000
        runConcurrently(threads: producers) { t in
            for i in 0..<perProducer { box.send(t * 1_000_000 + i) }
        }
        let idle = box.gate.isIdle
        #expect(idle)
        #expect(box.overlaps.load(ordering: .relaxed) == 0)
        #expect(box.handled.count == producers * perProducer)
        #expect(perProducerComplete(box.handled, producers: producers, perProducer: perProducer))
    }

    @Test("a send from inside the handler is queued and handled after the current message")
    func reentrant() {
        let gate = SerialGate<Int>()
        var log: [String] = []
        func handle(_ m: Int) {
            log.append("begin \(m)")
            if m < 3 { gate.send(m + 1, handle) }
            log.append("end \(m)")
        }
        gate.send(1, handle)
        let idle = gate.isIdle
        #expect(log == ["begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3"])
        #expect(idle)
    }
}
