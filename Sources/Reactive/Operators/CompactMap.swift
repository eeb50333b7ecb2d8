extension ObservableType {
    /// Transforms each element and passes the non-nil results.
    ///
    /// Element: `r` when `transform(e)` is `r`, nothing when it is nil. Completion and error:
    /// passed through. Disposal: disposes the source. Scheduler: none.
    @inlinable
    public func compactMap<Result>(_ transform: @escaping (Element) -> Result?) -> Observable<Result> {
        let source = self
        return Observable { observer in
            source.subscribe(AnyObserver<Element> { event in
                switch event {
                case .next(let element):
                    if let result = transform(element) { observer.on(.next(result)) }
                case .error(let error): observer.on(.error(error))
                case .completed: observer.on(.completed)
                }
            })
        }
    }
}
