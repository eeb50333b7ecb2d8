import Synchronization

/// Lock-free serialisation of work coming from several threads ("queue-drain" / emitter loop).
///
/// `send(_:handle:)` runs `handle` for the message at once when no other thread is inside
/// the gate — the uncontended fast path costs one compare-exchange and one subtract and
/// allocates nothing. When another thread is inside, the message is pushed onto a Treiber
/// stack and that thread handles it before it leaves. Re-entrant sends (from inside
/// `handle`) are queued the same way, so a handler never runs nested inside itself: delivery
/// stays serial and in order for everything sent by one thread.
///
/// No thread ever waits for another: a sender either handles its message or hands it over.
/// The consumer takes the whole stack at once (`exchange(nil)`), so the stack has no ABA
/// problem, and reverses it to restore FIFO order.
public struct SerialGate<Message>: ~Copyable {
    @usableFromInline
    final class Node {
        @usableFromInline let message: Message
        @usableFromInline var next: Unmanaged<Node>?

        @inlinable
        init(_ message: Message) { self.message = message }
    }

    /// Number of messages handed over and not yet accounted for by the draining thread.
    @usableFromInline let wip = Atomic<Int>(0)
    /// Messages handed over, newest first.
    @usableFromInline let stack = Atomic<Unmanaged<Node>?>(nil)

    /// An idle gate.
    @inlinable
    public init() {}

    deinit {
        var node = stack.exchange(nil, ordering: .acquiring)
        while let n = node {
            node = n.takeUnretainedValue().next
            n.release()
        }
    }

    /// Whether no thread is inside the gate right now (for assertions and tests).
    @inlinable
    public var isIdle: Bool { wip.load(ordering: .acquiring) == 0 }

    /// Handles `message` now, or hands it to the thread that is inside the gate.
    @inlinable
    public func send(_ message: Message, _ handle: (Message) -> Void) {
        if wip.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            handle(message)
            let left = wip.subtract(1, ordering: .acquiringAndReleasing).newValue
            if left != 0 { drain(missed: left, handle) }
        } else {
            push(message)
            if wip.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue == 0 {
                drain(missed: 1, handle)
            }
        }
    }

    @inlinable
    func push(_ message: Message) {
        let node = Unmanaged.passRetained(Node(message))
        var head = stack.load(ordering: .relaxed)
        while true {
            node.takeUnretainedValue().next = head
            let (exchanged, original) = stack.compareExchange(
                expected: head, desired: node, successOrdering: .releasing, failureOrdering: .relaxed)
            if exchanged { return }
            head = original
        }
    }

    /// Handles queued messages until every hand-over is accounted for.
    @inlinable
    func drain(missed: Int, _ handle: (Message) -> Void) {
        var missed = missed
        while true {
            if let top = stack.exchange(nil, ordering: .acquiring) {
                // Reverse the LIFO chain into FIFO order.
                var reversed: Unmanaged<Node>? = nil
                var node: Unmanaged<Node>? = top
                while let n = node {
                    let next = n.takeUnretainedValue().next
                    n.takeUnretainedValue().next = reversed
                    reversed = n
                    node = next
                }
                while let n = reversed {
                    let box = n.takeRetainedValue()
                    reversed = box.next
                    handle(box.message)
                }
            }
            missed = wip.subtract(missed, ordering: .acquiringAndReleasing).newValue
            if missed == 0 { return }
        }
    }
}
