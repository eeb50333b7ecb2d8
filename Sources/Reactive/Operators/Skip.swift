extension ObservableType {
    /// Drops the first `count` elements.
    ///
    /// - Element: every element after the first `count`; `skip(0)` passes everything.
    /// - Completion and error: passed through (also while still skipping).
    /// - Error: a negative `count` fails the subscription at once with
    ///   `RxError.argumentOutOfRange`, without subscribing to the source.
    /// - Disposal: disposes the source. Scheduler: none.
    @inlinable
    public func skip(_ count: Int) -> Observable<Element> {
        let source = self
        return Observable { observer in
            guard count >= 0 else {
                observer.on(.error(RxError.argumentOutOfRange))
                return Disposables.create()
            }
            var remaining = count
            return source.subscribe(AnyObserver<Element> { event in
                if case .next = event, remaining > 0 {
                    remaining -= 1
                    return
                }
                observer.on(event)
            })
        }
    }
}
