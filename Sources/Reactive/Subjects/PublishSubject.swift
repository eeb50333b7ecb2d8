/// Delivers each event to the observers subscribed at that moment.
///
/// Late subscribers after a stop event get only that stop event. See `SubjectCore` for the
/// threading rules: any thread may send, delivery is serial and lock-free.
public final class PublishSubject<Element>: SubjectBase<Element>, ObservableType, ObserverType, @unchecked Sendable {
    /// Creates a subject.
    @inlinable
    public override init() {}

    /// Sends an event to every current observer.
    ///
    /// An element that would reach no observer is dropped at once, without passing the gate
    /// (see `SubjectCore.dropsElementsNow`): a hot stream nobody watches costs two loads.
    @inlinable
    public func on(_ event: Event<Element>) {
        if case .next = event, core.dropsElementsNow { return }
        core.send(.event(event))
    }

    /// Sends `.next(element)`; the same as `on(.next(element))`, checking for observers
    /// before the event is made, so an element nobody receives is not even wrapped.
    @inlinable
    public func onNext(_ element: Element) {
        if core.dropsElementsNow { return }
        core.send(.event(.next(element)))
    }
}
