extension ObservableType {
    /// Projects each element to an inner sequence and merges the inners' elements.
    ///
    /// `flatMap(f)` is `map(f).merge()` in one sink: see `merge()`.
    /// - Element: every element of every inner, in arrival order, serialised.
    /// - Completion: when this sequence and every inner have completed.
    /// - Error: the first error (this sequence's, an inner's, or one thrown by `selector`)
    ///   is passed on at once; every subscription is disposed.
    /// - Disposal: disposes this sequence's and every inner subscription.
    /// - Scheduler: none.
    @inlinable
    public func flatMap<Source: ObservableType>(_ selector: @escaping (Element) throws -> Source)
    -> Observable<Source.Element> {
        let source = self
        return Observable { observer in
            let sink = MergeSink<Element, Source.Element>(
                downstream: observer, maxConcurrent: .max, project: { try selector($0).asObservable() })
            sink.run(source)
            return sink
        }
    }
}
