import Synchronization

/// Holds a current value: a new subscriber first receives it, then every later event.
///
/// `value()` is answered inside the subject's gate, so it never tears and never races with a
/// delivery; when another thread is delivering at that moment, the caller waits for the
/// gate's turn (reads only — `on(_:)` never waits).
public final class BehaviorSubject<Element>: SubjectBase<Element>, ObservableType, ObserverType, @unchecked Sendable {
    // Touched only inside the gate.
    @usableFromInline @exclusivity(unchecked) var current: Element

    /// Creates a subject holding `value`.
    public init(value: Element) {
        current = value
        super.init()
        core.tracksDeliveringThread = true
        core.onNextHook = { [weak self] in self?.current = $0 }
        core.replayHook = { [weak self] observer in
            guard let self else { return }
            if self.core.stopEvent == nil { observer.on(.next(self.current)) }
        }
    }

    /// The current value; throws the error the subject ended with.
    public func value() throws -> Element {
        if core.isDeliveringOnCurrentThread {
            // Read from inside this subject's own delivery: the gate is ours already.
            if case .error(let e) = core.stopEvent { throw e }
            return current
        }
        let result = GateAnswer<Result<Element, any Error>>()
        core.send(.access { [self] in
            if case .error(let e) = self.core.stopEvent {
                result.set(.failure(e))
            } else {
                result.set(.success(self.current))
            }
        })
        return try result.wait().get()
    }

    /// Sends an event; `next` also becomes the current value.
    @inlinable
    public func on(_ event: Event<Element>) {
        core.send(.event(event))
    }
}

/// A value produced inside a gate and awaited by the thread that asked for it.
///
/// The asking thread normally handled the request itself (uncontended gate) and finds the
/// value already set; it waits (yielding) only while another thread is delivering.
final class GateAnswer<Value>: @unchecked Sendable {
    // Written once before `ready` is released, read after it is acquired.
    private var value: Value?
    private let ready = Atomic<Bool>(false)

    func set(_ value: Value) {
        self.value = value
        ready.store(true, ordering: .releasing)
    }

    func wait() -> Value {
        var spins = 0
        while !ready.load(ordering: .acquiring) {
            spins += 1
            if spins > 64 { sched_yield() }
        }
        return value!
    }
}

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
