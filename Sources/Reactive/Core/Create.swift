extension Observable {
    /// Creates a sequence from a subscribe function written by the user.
    ///
    /// The observer handed to `subscribe` enforces the grammar (nothing after `error` or
    /// `completed`) and goes quiet once the subscription is disposed. After a stop event
    /// the disposable returned by `subscribe` is disposed, even if the stop event came
    /// before `subscribe` returned.
    @inlinable
    public static func create(_ subscribe: @escaping (AnyObserver<Element>) -> Disposable) -> Observable<Element> {
        Observable { downstream in
            let sink = GuardedObserver(CreateTarget(downstream))
            let upstream = subscribe(AnyObserver { sink.on($0) })
            sink.setUpstream(upstream)
            return sink
        }
    }
}

/// `Observable.create`'s target: a user-written source's events go to the downstream
/// through a `GuardedObserver` (grammar, disposal, and dispose-after-stop).
@usableFromInline
struct CreateTarget<Element>: GuardedTarget {
    @usableFromInline let downstream: AnyObserver<Element>

    @inlinable
    init(_ downstream: AnyObserver<Element>) {
        self.downstream = downstream
    }

    @inlinable
    func onNext(_ element: Element) {
        downstream.on(.next(element))
    }

    @inlinable
    func onStop(_ event: Event<Element>) {
        downstream.on(event)
    }
}
