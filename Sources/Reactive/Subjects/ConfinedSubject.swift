#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Synchronization

/// A `PublishSubject` for an owner that sends, subscribes and disposes from one thread at a
/// time — a serial scheduler's work, such as the replay's player — without the gate that lets
/// `PublishSubject` take events from any thread.
///
/// Semantics, as `PublishSubject`'s (`SubjectCore`): each event goes to the observers
/// subscribed at that moment, in order of subscription; an event sent from inside a delivery
/// is delivered after the current one, not nested; a subscription made inside a delivery
/// takes effect from the next event; a subscription disposed inside a delivery receives
/// nothing more, not even the rest of that delivery; after `completed` or an error every
/// observer is dropped, and a later subscriber gets only the stop event.
///
/// What it gives up: calls from two threads at once (one thread after another is fine, as a
/// serial dispatch queue's work hops threads). Debug builds check it — a call while another
/// thread is inside one traps; a call from inside a delivery on the same thread is the
/// re-entrancy above — release builds trust the owner. For that,
/// a replayed frame is not wrapped in a gate message, and no atomic operation or retaining
/// closure stands between the player and the filter stage (R1, docs/benchmarks.md).
public final class ConfinedSubject<Element>: ObservableType, ObserverType, @unchecked Sendable {
    /// The list and the stop event; subscriptions hold it, not this object, so that this one
    /// going (`deinit`) can drop the subscriptions nobody disposed (as `SubjectBase`).
    @usableFromInline let core = ConfinedSubjectCore<Element>()

    /// Creates a subject.
    @inlinable
    public init() {}

    deinit { core.detachAll() }

    /// Whether anyone is subscribed.
    @inlinable
    public var hasObservers: Bool { core.hasObservers }

    /// Sends an event to every current observer (after the delivery in progress, if any).
    @inlinable
    public func on(_ event: Event<Element>) { core.on(event) }

    /// Subscribes `observer` (at once: there is no gate to pass).
    @inlinable
    public func subscribe(_ observer: AnyObserver<Element>) -> Disposable { core.subscribe(observer) }

    /// This subject as an `Observable` (subscribing it subscribes the core, which outlives
    /// this object while subscriptions do).
    @inlinable
    public func asObservable() -> Observable<Element> {
        Observable { [core] in core.subscribe($0) }
    }
}

/// The subject's list and stop event (`ConfinedSubject`). Inlinable, as `SubjectCore`: a client
/// module specialises it for its element type, or every event would go through generic
/// metadata look-ups (measured in R1: twice the pipeline's instructions).
@usableFromInline
final class ConfinedSubjectCore<Element>: @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline @exclusivity(unchecked) var entries: ContiguousArray<ConfinedSubscription<Element>> = []
    @usableFromInline @exclusivity(unchecked) var stopEvent: Event<Element>?
    @usableFromInline @exclusivity(unchecked) var delivering = false
    /// Events sent from inside a delivery, delivered after it.
    @usableFromInline @exclusivity(unchecked) var queued: [Event<Element>] = []
    #if DEBUG
    /// The thread inside a call, 0 when none (the debug check of the one-thread-at-a-time rule).
    @usableFromInline let inside = Atomic<UInt>(0)
    #endif

    @inlinable
    init() {}

    @inlinable
    var hasObservers: Bool { !entries.isEmpty }

    @inlinable
    func on(_ event: Event<Element>) {
        let outermost = enter()
        defer { leave(outermost) }
        guard stopEvent == nil else { return }
        if delivering {
            queued.append(event)
            return
        }
        delivering = true
        deliver(event)
        while !queued.isEmpty { deliver(queued.removeFirst()) }
        delivering = false
    }

    @inlinable
    func deliver(_ event: Event<Element>) {
        guard stopEvent == nil else { return }
        switch event {
        case .next:
            // The array as it is now: a subscription made by an observer joins from the next
            // event; one disposed by an observer is skipped by its flag.
            for entry in entries where entry.isActive { entry.observer.on(event) }
        case .error, .completed:
            stopEvent = event
            let all = entries
            entries = []
            for entry in all where entry.deactivate() { entry.observer.on(event) }
        }
    }

    @inlinable
    func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        let outermost = enter()
        defer { leave(outermost) }
        if let stopEvent {
            observer.on(stopEvent)
            return Disposables.create()
        }
        let entry = ConfinedSubscription(observer: observer, core: self)
        entries.append(entry)
        return entry
    }

    @inlinable
    func remove(_ entry: ConfinedSubscription<Element>) {
        let outermost = enter()
        defer { leave(outermost) }
        if let i = entries.firstIndex(where: { $0 === entry }) { entries.remove(at: i) }
    }

    /// The subject object is gone: drop every subscription without an event.
    @inlinable
    func detachAll() {
        let all = entries
        entries = []
        for entry in all { _ = entry.deactivate() }
    }

    /// Debug builds: marks the calling thread inside; true for the outermost call. Traps when
    /// another thread is inside.
    @inlinable @inline(__always)
    func enter() -> Bool {
        #if DEBUG
        let me = UInt(pthread_self())
        let (entered, seen) = inside.compareExchange(expected: 0, desired: me, ordering: .acquiring)
        precondition(entered || seen == me, "ConfinedSubject used from two threads at once")
        return entered
        #else
        return false
        #endif
    }

    @inlinable @inline(__always)
    func leave(_ outermost: Bool) {
        #if DEBUG
        if outermost { inside.store(0, ordering: .releasing) }
        #endif
    }
}

/// One observer of a `ConfinedSubject`.
@usableFromInline
final class ConfinedSubscription<Element>: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let observer: AnyObserver<Element>
    @usableFromInline @exclusivity(unchecked) var active = true
    /// Strong, as `SubjectSubscription`'s core: the cycle ends when this is disposed, when the
    /// subject stops (its list is emptied) or when the subject object goes (`detachAll`).
    @usableFromInline @exclusivity(unchecked) var core: ConfinedSubjectCore<Element>?

    @inlinable
    init(observer: AnyObserver<Element>, core: ConfinedSubjectCore<Element>) {
        self.observer = observer
        self.core = core
    }

    @inlinable var isActive: Bool { active }
    @inlinable var isDisposed: Bool { !active }

    /// Marks the subscription inactive and lets its core go; true for the caller that did it.
    @inlinable
    func deactivate() -> Bool {
        guard active else { return false }
        active = false
        core = nil
        return true
    }

    @inlinable
    func dispose() {
        guard active, let core else { return }
        active = false
        self.core = nil
        core.remove(self)
    }
}
