extension ObservableType {
    /// On error, continues with the sequence `handler` returns for that error.
    ///
    /// - Element: this sequence's elements, then (after an error) the handler sequence's.
    /// - Completion: this sequence's, or after an error the handler sequence's.
    /// - Error: an error of this sequence is not passed on: the source subscription is
    ///   disposed and `handler`'s sequence is subscribed in its place. An error thrown by
    ///   `handler`, or one of the handler's sequence, is passed on.
    /// - Disposal: disposes whichever subscription is current.
    /// - Scheduler: none; the handler sequence is subscribed on the thread that delivered
    ///   the error.
    @inlinable
    public func `catch`(_ handler: @escaping (any Error) throws -> Observable<Element>) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = CatchSink(downstream: observer, handler: handler)
            sink.run(source.asObservable())
            return sink
        }
    }

    /// The RxSwift 5 name of `catch(_:)`.
    @available(*, deprecated, renamed: "catch(_:)")
    @inlinable
    public func catchError(_ handler: @escaping (any Error) throws -> Observable<Element>) -> Observable<Element> {
        `catch`(handler)
    }
}

/// One subscription at a time (the source, then at most one handler sequence), so events
/// arrive serially without a gate; the switch goes through a `SerialDisposable`.
@usableFromInline
final class CatchSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let handler: (any Error) throws -> Observable<Element>
    @usableFromInline let current = SerialDisposable()

    @inlinable
    init(downstream: AnyObserver<Element>, handler: @escaping (any Error) throws -> Observable<Element>) {
        self.downstream = downstream
        self.handler = handler
        super.init()
    }

    @usableFromInline
    override func disposeResources() {
        current.dispose()
    }

    @inlinable
    func run(_ source: Observable<Element>) {
        // A holder is installed before subscribing: a source that fails during its own
        // `subscribe` installs the handler's subscription, which must not be overwritten.
        let holder = SingleAssignmentDisposable()
        current.disposable = holder
        holder.setDisposable(source.subscribe(AnyObserver { self.onSource($0) }))
    }

    @inlinable
    func onSource(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next:
            downstream.on(event)
        case .completed:
            downstream.on(event)
            dispose()
        case .error(let error):
            let fallback: Observable<Element>
            do {
                fallback = try handler(error)
            } catch {
                downstream.on(.error(error))
                dispose()
                return
            }
            let holder = SingleAssignmentDisposable()
            current.disposable = holder   // disposes the failed source's subscription
            holder.setDisposable(fallback.subscribe(AnyObserver { self.onFallback($0) }))
        }
    }

    @inlinable
    func onFallback(_ event: Event<Element>) {
        if isDisposed { return }
        downstream.on(event)
        if event.isStopEvent { dispose() }
    }
}
