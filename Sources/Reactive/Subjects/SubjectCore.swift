import Synchronization
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The machinery the three subjects share: a lock-free serial gate through which every
/// event, subscription and unsubscription passes, and the observer list that only the
/// thread inside the gate touches.
///
/// Several threads may call `on(_:)` at once: their events are delivered one at a time, in
/// order per thread (serial delivery per subscription). A subscription made from inside an
/// `onNext` takes effect after that event has been delivered to everyone; an event sent
/// from inside `onNext` is delivered after the current one (no nested delivery).
/// `dispose()` of a subscription clears its entry's atomic flag at once, and every delivery
/// checks that flag before it calls the entry's observer, so an event delivered after the
/// flag is seen does not reach it — including the rest of a delivery in progress when
/// disposal happens inside one of its `onNext`s. It does not wait: if the thread inside the
/// gate has already checked the flag when another thread disposes, that one event may still
/// reach the observer after `dispose()` has returned there. The entry leaves the list at the
/// next turn of the gate.
@usableFromInline
final class SubjectCore<Element>: @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline
    enum Message {
        case event(Event<Element>)
        case subscribe(SubjectSubscription<Element>)
        case unsubscribe(SubjectSubscription<Element>)
        case access(() -> Void)
        /// The subject object is gone: drop every entry without notifying.
        case detachAll
    }

    @usableFromInline let gate = SerialGate<Message>()
    // Everything below is touched only inside the gate.
    @usableFromInline @exclusivity(unchecked) var entries: ContiguousArray<SubjectSubscription<Element>> = []
    @usableFromInline @exclusivity(unchecked) var stopEvent: Event<Element>?
    /// Called inside the gate for every `next` before delivery (BehaviorSubject, ReplaySubject).
    @usableFromInline @exclusivity(unchecked) var onNextHook: ((Element) -> Void)?
    /// Called inside the gate for every new subscriber before it is added.
    @usableFromInline @exclusivity(unchecked) var replayHook: ((AnyObserver<Element>) -> Void)?
    @usableFromInline let observerCount = Atomic<Int>(0)
    /// Whether `deliveringThread` is maintained (BehaviorSubject's re-entrant `value()`).
    @usableFromInline @exclusivity(unchecked) var tracksDeliveringThread = false
    /// The thread inside the gate (as `pthread_self()`), 0 when none; relaxed stores only.
    @usableFromInline let deliveringThread = Atomic<UInt>(0)

    /// Whether an element the calling thread sends now would reach no one, so that it may be
    /// dropped without passing the gate: no observer is subscribed, and no thread is inside
    /// the gate. The second half keeps the thread's own order: a subscription it made while
    /// another thread was inside is queued in the gate (and is not counted yet) until that
    /// thread leaves, and until then its elements take the gate too and queue behind it.
    /// An idle gate read with acquire ordering has handed over every message queued before,
    /// with the count they left. A subscription made on another thread at the same moment is
    /// not ordered with the element either way.
    @inlinable
    var dropsElementsNow: Bool {
        gate.isIdle && observerCount.load(ordering: .relaxed) == 0
    }

    /// Whether the calling thread is inside this subject's gate right now.
    var isDeliveringOnCurrentThread: Bool {
        deliveringThread.load(ordering: .relaxed) == UInt(pthread_self())
    }

    @inlinable
    init() {
    }

    @inlinable
    func send(_ message: Message) {
        gate.send(message) { [unowned(unsafe) self] in
            if self.tracksDeliveringThread {
                self.deliveringThread.store(UInt(pthread_self()), ordering: .relaxed)
                self.handle($0)
                self.deliveringThread.store(0, ordering: .relaxed)
            } else {
                self.handle($0)
            }
        }
    }

    @inlinable
    func handle(_ message: Message) {
        switch message {
        case .event(let event):
            guard stopEvent == nil else { return }
            switch event {
            case .next(let element):
                onNextHook?(element)
                for entry in entries where entry.isActive {
                    entry.observer.on(event)
                }
            case .error, .completed:
                stopEvent = event
                let all = entries
                entries = []
                observerCount.store(0, ordering: .relaxed)
                for entry in all where entry.deactivate() {
                    entry.observer.on(event)
                }
            }
        case .subscribe(let entry):
            guard entry.isActive else { return }
            replayHook?(entry.observer)
            if let stopEvent {
                if entry.deactivate() { entry.observer.on(stopEvent) }
                return
            }
            guard entry.isActive else { return }   // disposed during replay
            entries.append(entry)
            observerCount.wrappingAdd(1, ordering: .relaxed)
        case .unsubscribe(let entry):
            if let i = entries.firstIndex(where: { $0 === entry }) {
                entries.remove(at: i)
                observerCount.wrappingSubtract(1, ordering: .relaxed)
            }
        case .access(let body):
            body()
        case .detachAll:
            entries = []
            observerCount.store(0, ordering: .relaxed)
        }
    }

    /// Called from the subject object's `deinit`: breaks the core ↔ entries cycle.
    @inlinable
    func detachAll() {
        send(.detachAll)
    }

    @inlinable
    func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        let entry = SubjectSubscription(observer: observer, core: self)
        send(.subscribe(entry))
        return entry
    }

    /// The subject as an `Observable`: subscribing it subscribes the core (not the subject
    /// object, which may be released while subscriptions live on).
    @inlinable
    func asObservable() -> Observable<Element> {
        Observable { [self] in subscribe($0) }
    }

    /// Whether anyone is subscribed (relaxed: a subscription in flight may not be counted yet).
    @inlinable
    var hasObservers: Bool { observerCount.load(ordering: .relaxed) > 0 }
}

/// One observer of a subject; disposing it stops delivery of every event that checks its
/// flag afterwards (see `SubjectCore` for the one event that may be in flight).
@usableFromInline
final class SubjectSubscription<Element>: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let observer: AnyObserver<Element>
    @usableFromInline let active = Atomic<Bool>(true)
    /// Strong: the core keeps its entries and an entry keeps its core. The cycle ends when
    /// the entry is disposed (it leaves the list), when the subject stops (the list is
    /// emptied), or when the subject object itself is released (`detachAll`). A weak
    /// reference here would give the core a side-table refcount and put every retain of it
    /// on the event path onto the slow path (measured: ~37% of W1).
    @usableFromInline let core: SubjectCore<Element>

    @inlinable
    init(observer: AnyObserver<Element>, core: SubjectCore<Element>) {
        self.observer = observer
        self.core = core
    }

    @inlinable
    var isActive: Bool { active.load(ordering: .relaxed) }

    @inlinable
    var isDisposed: Bool { !active.load(ordering: .acquiring) }

    /// Marks the subscription inactive; true for the caller that did it.
    @inlinable
    func deactivate() -> Bool {
        active.exchange(false, ordering: .acquiringAndReleasing)
    }

    @inlinable
    func dispose() {
        if deactivate() { core.send(.unsubscribe(self)) }
    }
}
