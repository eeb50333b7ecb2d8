/// Something that receives events.
public protocol ObserverType<Element> {
    /// The element type.
    associatedtype Element
    /// Delivers one event. Callers deliver serially and respect the event grammar.
    func on(_ event: Event<Element>)
}

extension ObserverType {
    /// Delivers `.next(element)`.
    @inlinable public func onNext(_ element: Element) { on(.next(element)) }
    /// Delivers `.completed`.
    @inlinable public func onCompleted() { on(.completed) }
    /// Delivers `.error(error)`.
    @inlinable public func onError(_ error: any Error) { on(.error(error)) }
    /// This observer, type-erased.
    @inlinable public func asObserver() -> AnyObserver<Element> { AnyObserver(self) }
}

/// A type-erased observer: one closure that receives every event.
///
/// The whole core passes observers in this form. A closure created in `@inlinable` operator
/// code is specialised where the chain is built, so the per-event path is a chain of direct
/// closure calls — the same shape as the hand-written floor — instead of generic witness
/// calls that need metadata look-ups (docs/benchmarks.md, "What the profiles showed").
@frozen
public struct AnyObserver<Element>: ObserverType, @unchecked Sendable {
    /// The event handler.
    public typealias EventHandler = (Event<Element>) -> Void

    @usableFromInline let handler: EventHandler

    /// Wraps an event handler.
    @inlinable
    public init(_ handler: @escaping EventHandler) {
        self.handler = handler
    }

    /// Wraps another observer.
    @inlinable
    public init<Observer: ObserverType>(_ observer: Observer) where Observer.Element == Element {
        if let any = observer as? AnyObserver<Element> {
            self = any
        } else {
            self.handler = observer.on
        }
    }

    /// Delivers one event.
    @inlinable
    public func on(_ event: Event<Element>) {
        handler(event)
    }
}
