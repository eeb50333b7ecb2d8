/// A sink whose inputs (its sources' events, timer ticks, subscriptions) all pass one
/// `SerialGate` and are handled one at a time by `handle(_:)`: `send` is the one entry.
///
/// The operators that merge several inputs behind a gate (combineLatest, withLatestFrom,
/// retry) share this instead of each writing the same `send`.
@usableFromInline
protocol GatedSink: AnyObject {
    /// What goes through the gate.
    associatedtype Message
    /// The gate every message passes.
    var gate: SerialGate<Message> { get }
    /// Handles one message; called inside the gate, one at a time.
    func handle(_ message: Message)
}

extension GatedSink {
    /// Sends `message` through the gate to `handle(_:)` (any thread).
    @inlinable
    func send(_ message: Message) {
        gate.send(message) { self.handle($0) }
    }
}
