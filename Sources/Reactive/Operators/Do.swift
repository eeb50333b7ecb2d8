extension ObservableType {
    /// Calls side-effect closures for the sequence's events and lifecycle, passing the events
    /// on unchanged.
    ///
    /// - Element, error, completion: `onNext` / `onError` / `onCompleted` run *before* the
    ///   event is passed on, on the delivering thread.
    /// - Subscription: `onSubscribe` runs before subscribing to the source, `onSubscribed`
    ///   after the source's `subscribe` returned (so after any synchronous events).
    /// - Disposal: `onDispose` runs once, after the source subscription was disposed, when
    ///   the returned subscription is disposed (a `subscribe(onNext:...)` at the end of the
    ///   chain disposes it after a stop event).
    /// - Scheduler: none.
    @inlinable
    public func `do`(onNext: ((Element) -> Void)? = nil,
                     onError: ((any Error) -> Void)? = nil,
                     onCompleted: (() -> Void)? = nil,
                     onSubscribe: (() -> Void)? = nil,
                     onSubscribed: (() -> Void)? = nil,
                     onDispose: (() -> Void)? = nil) -> Observable<Element> {
        let source = self
        return Observable { observer in
            onSubscribe?()
            let subscription = source.subscribe(AnyObserver<Element> { event in
                switch event {
                case .next(let element): onNext?(element)
                case .error(let error): onError?(error)
                case .completed: onCompleted?()
                }
                observer.on(event)
            })
            onSubscribed?()
            guard let onDispose else { return subscription }
            return Disposables.create {
                subscription.dispose()
                onDispose()
            }
        }
    }
}
