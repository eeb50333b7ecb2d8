/// A sequence of events that observers subscribe to.
public protocol ObservableType<Element> {
    /// The element type.
    associatedtype Element

    /// Subscribes `observer`; the returned disposable ends the subscription.
    func subscribe(_ observer: AnyObserver<Element>) -> Disposable

    /// This sequence as an `Observable`.
    func asObservable() -> Observable<Element>
}

extension ObservableType {
    /// Wraps any observable type as an `Observable`.
    @inlinable
    public func asObservable() -> Observable<Element> {
        let source = self
        return Observable { source.subscribe($0) }
    }

    /// Subscribes any observer type.
    @inlinable
    public func subscribe<Observer: ObserverType>(_ observer: Observer) -> Disposable
    where Observer.Element == Element {
        subscribe(AnyObserver(observer))
    }
}

/// An observable sequence: a subscribe function.
///
/// A value type rather than RxSwift's class hierarchy: an operator is one closure that
/// captures its source and parameters, built in `@inlinable` code so both the subscribe
/// closure and the per-event observer closures it creates are specialised in the module that
/// builds the chain. Building an operator costs one allocation (the closure context).
///
/// Operators built by this module trust their source to respect the event grammar; sequences
/// from user code (`Observable.create`) and subjects are checked at the source.
@frozen
public struct Observable<Element>: ObservableType, @unchecked Sendable {
    /// The subscribe function.
    public typealias SubscribeHandler = (AnyObserver<Element>) -> Disposable

    @usableFromInline let handler: SubscribeHandler

    /// Internal constructor for operators: `handler` must respect the grammar and disposal
    /// rules itself. User code goes through `Observable.create`, which enforces them.
    @inlinable
    init(_ handler: @escaping SubscribeHandler) {
        self.handler = handler
    }

    /// Subscribes `observer`.
    @inlinable
    public func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        handler(observer)
    }

    /// Returns itself.
    @inlinable
    public func asObservable() -> Observable<Element> { self }
}
