extension ObservableType {
    /// On error, emits `element` and completes.
    ///
    /// - Element: this sequence's elements; after an error, `element`.
    /// - Completion: this sequence's; after an error, right after `element`.
    /// - Error: never passed on.
    /// - Disposal: disposes the source subscription (it is also disposed at the error).
    /// - Scheduler: none; `element` and completion are delivered on the erroring thread.
    @inlinable
    public func catchAndReturn(_ element: Element) -> Observable<Element> {
        `catch` { _ in .just(element) }
    }
}
