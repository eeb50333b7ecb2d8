extension ObservableType {
    /// Emits `elements` first, then the source's events.
    ///
    /// - Element: `elements` in order, synchronously during `subscribe`, then the source's.
    /// - Completion and error: the source's, passed through.
    /// - Disposal: disposes the source. The prefix is delivered before `subscribe` returns,
    ///   so it cannot be interrupted by disposing the returned subscription.
    /// - Scheduler: none.
    @inlinable
    public func startWith(_ elements: Element...) -> Observable<Element> {
        let source = self
        return Observable { observer in
            for element in elements { observer.on(.next(element)) }
            return source.subscribe(observer)
        }
    }
}
