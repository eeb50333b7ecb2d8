/// Moves a value into a `@Sendable` closure (e.g. `DispatchQueue.async`) where the core
/// already guarantees exclusive or serialised access by other means (a `SerialGate`, an
/// atomic state word, or the event grammar's serial delivery).
@usableFromInline
@frozen
struct UnsafeTransfer<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}
