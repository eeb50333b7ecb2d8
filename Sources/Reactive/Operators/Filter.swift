extension ObservableType {
    /// Passes only the elements for which `predicate` is true.
    ///
    /// Element: `e` when `predicate(e)`. Completion and error: passed through.
    /// Disposal: disposes the source. Scheduler: none.
    @inlinable
    public func filter(_ predicate: @escaping (Element) -> Bool) -> Observable<Element> {
        let source = self
        return Observable { observer in
            source.subscribe(AnyObserver<Element> { event in
                switch event {
                case .next(let element):
                    if predicate(element) { observer.on(event) }
                case .error, .completed:
                    observer.on(event)
                }
            })
        }
    }
}
