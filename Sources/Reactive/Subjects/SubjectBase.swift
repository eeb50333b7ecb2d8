/// What every subject is besides its own events: a `SubjectCore` (the gate, the observer
/// list, the stop event), subscribing to it, its `Observable` view and its observer count.
///
/// `PublishSubject`, `BehaviorSubject` and `ReplaySubject` differ only in what they keep and
/// replay to a new subscriber (the core's hooks) and in `on(_:)`; this class holds the rest
/// once. It is `public` because they inherit from it, not `open`: no subject is made outside
/// this module.
public class SubjectBase<Element>: @unchecked Sendable {
    @usableFromInline let core = SubjectCore<Element>()

    @usableFromInline
    init() {}

    deinit {
        // Subscriptions that were never disposed would otherwise keep the core alive.
        core.detachAll()
    }

    /// Whether anyone is subscribed.
    public final var hasObservers: Bool { core.hasObservers }

    /// Subscribes an observer (a `BehaviorSubject` first sends it the current value, a
    /// `ReplaySubject` the buffered elements; both through the core's replay hook).
    @inlinable
    public final func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        core.subscribe(observer)
    }

    /// This subject as an `Observable`.
    @inlinable
    public final func asObservable() -> Observable<Element> {
        core.asObservable()
    }
}
