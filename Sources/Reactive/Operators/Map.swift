extension ObservableType {
    /// Transforms each element with `transform`.
    ///
    /// Element: `transform(e)` for each `e`. Completion and error: passed through.
    /// Disposal: disposes the source. Scheduler: none; runs on the delivering thread.
    @inlinable
    public func map<Result>(_ transform: @escaping (Element) -> Result) -> Observable<Result> {
        let source = self
        return Observable { observer in
            source.subscribe(AnyObserver<Element> { event in
                switch event {
                case .next(let element): observer.on(.next(transform(element)))
                case .error(let error): observer.on(.error(error))
                case .completed: observer.on(.completed)
                }
            })
        }
    }
}
