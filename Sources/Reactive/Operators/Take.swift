extension ObservableType {
    /// Passes the first `count` elements, then completes and disposes the source.
    ///
    /// - Element: the first `count` elements.
    /// - Completion: right after the `count`-th element, then the source is disposed;
    ///   earlier if the source completes.
    ///   `take(0)` completes at once without subscribing to the source.
    /// - Error: passed through while fewer than `count` elements were taken. A negative
    ///   `count` fails at once with `RxError.argumentOutOfRange`.
    /// - Disposal: disposes the source. Scheduler: none.
    @inlinable
    public func take(_ count: Int) -> Observable<Element> {
        let source = self
        return Observable { observer in
            guard count > 0 else {
                observer.on(count == 0 ? .completed : .error(RxError.argumentOutOfRange))
                return Disposables.create()
            }
            let sink = TakeCountSink(downstream: observer, count: count)
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

/// Counts elements; upstream delivers serially, so the counter needs no gate.
@usableFromInline
final class TakeCountSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline var remaining: Int

    @inlinable
    init(downstream: AnyObserver<Element>, count: Int) {
        self.downstream = downstream
        self.remaining = count
        super.init()
    }

    @inlinable
    func on(_ event: Event<Element>) {
        // remaining == 0: already completed; a source that ignores disposal is cut off here.
        guard remaining > 0, !isDisposed else { return }
        switch event {
        case .next:
            remaining -= 1
            downstream.on(event)
            // Disposed from inside onNext: the subscriber is gone, send nothing more.
            if remaining == 0, !isDisposed {
                downstream.on(.completed)
                dispose()
            }
        case .error, .completed:
            remaining = 0
            downstream.on(event)
            dispose()
        }
    }
}
