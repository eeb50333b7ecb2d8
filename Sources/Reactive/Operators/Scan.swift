extension ObservableType {
    /// Emits each intermediate result of folding the elements into `seed`.
    ///
    /// - Element: for each `e`, `acc = accumulator(acc, e)` (starting from `seed`) and `acc`
    ///   is emitted. The seed itself is not emitted. Each subscription starts from `seed`.
    /// - Completion and error: passed through.
    /// - Disposal: disposes the source. Holds no other resources.
    /// - Scheduler: none; runs on the delivering thread.
    @inlinable
    public func scan<Accumulate>(_ seed: Accumulate,
                                 accumulator: @escaping (Accumulate, Element) -> Accumulate) -> Observable<Accumulate> {
        scan(into: seed) { accumulate, element in accumulate = accumulator(accumulate, element) }
    }

    /// `scan` that mutates the accumulator in place (no copy per element for arrays and
    /// dictionaries); emits a copy of the accumulator after each element.
    @inlinable
    public func scan<Accumulate>(into seed: Accumulate,
                                 _ accumulator: @escaping (inout Accumulate, Element) -> Void) -> Observable<Accumulate> {
        let source = self
        return Observable { observer in
            var accumulate = seed
            return source.subscribe(AnyObserver<Element> { event in
                switch event {
                case .next(let element):
                    accumulator(&accumulate, element)
                    observer.on(.next(accumulate))
                case .error(let error): observer.on(.error(error))
                case .completed: observer.on(.completed)
                }
            })
        }
    }
}
