extension ObservableType {
    /// Projects each element to an inner sequence and mirrors only the newest inner.
    ///
    /// - Element: the elements of the inner produced from the latest element of this
    ///   sequence. An element of this sequence disposes the previous inner at once (before
    ///   the new inner is subscribed), so nothing from an older inner arrives after a switch.
    /// - Completion: when this sequence has completed and the current inner (if any) has
    ///   completed. A completed inner is not an error: the sequence waits for the next one.
    /// - Error: this sequence's, the current inner's, or one thrown by `selector`, at once;
    ///   everything is disposed.
    /// - Disposal: disposes this sequence's and the current inner's subscription.
    /// - Scheduler: none; events are serialised through one `SerialGate`.
    @inlinable
    public func flatMapLatest<Source: ObservableType>(_ selector: @escaping (Element) throws -> Source)
    -> Observable<Source.Element> {
        let source = self
        return Observable { observer in
            let sink = MergeSink<Element, Source.Element>(
                downstream: observer, maxConcurrent: .max, switchesToLatest: true,
                project: { try selector($0).asObservable() })
            sink.run(source)
            return sink
        }
    }
}
