import Synchronization

/// An atomic `Int` alone on its own 128-byte block (two cache lines, against adjacent-line
/// prefetch), for counters that one side updates per event while the other side reads the
/// fields around it per event: `TicketRing`'s ticket counter, `ObserveOnSink`'s job counter.
/// Inside an object, such a counter would make every update invalidate the reader's line.
@usableFromInline
struct IsolatedCounter: ~Copyable {
    @usableFromInline let block: UnsafeMutablePointer<Atomic<Int>>

    /// A counter holding `value`.
    @inlinable
    init(_ value: Int) {
        block = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 128)
            .bindMemory(to: Atomic<Int>.self, capacity: 1)
        block.initialize(to: Atomic(value))
    }

    deinit {
        block.deinitialize(count: 1)
        UnsafeMutableRawPointer(block).deallocate()
    }

    /// Adds 1 with relaxed ordering and returns the value before (a ticket dispenser).
    @inlinable
    func takeNext() -> Int {
        block.pointee.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Adds 1 (acquiring and releasing) and returns the value before.
    @inlinable
    func increment() -> Int {
        block.pointee.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
    }

    /// Subtracts `operand` (acquiring and releasing) and returns the value after.
    @inlinable
    func subtract(_ operand: Int) -> Int {
        block.pointee.subtract(operand, ordering: .acquiringAndReleasing).newValue
    }

    /// The value (acquiring).
    @inlinable
    func load() -> Int {
        block.pointee.load(ordering: .acquiring)
    }
}
