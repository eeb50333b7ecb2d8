extension ObservableType {
    /// On each element of this sequence, emits `resultSelector(element, latest)` where
    /// `latest` is the most recent element of `second`.
    ///
    /// - Element: driven by this sequence only. Elements that arrive before `second` has
    ///   emitted anything are dropped; `second`'s elements only update `latest`.
    /// - Completion: when this sequence completes. `second` completing does not complete
    ///   the result: its last element stays `latest`.
    /// - Error: an error of either sequence, or one thrown by `resultSelector`, at once;
    ///   both subscriptions are disposed.
    /// - Disposal: disposes both subscriptions.
    /// - Scheduler: none; events are serialised through one `SerialGate`. `second` is
    ///   subscribed first, so a value it emits during `subscribe` is already `latest` for
    ///   this sequence's first element.
    @inlinable
    public func withLatestFrom<Second: ObservableType, Result>(
        _ second: Second, resultSelector: @escaping (Element, Second.Element) throws -> Result
    ) -> Observable<Result> {
        let source = self
        return Observable { observer in
            let sink = WithLatestFromSink(downstream: observer, selector: resultSelector)
            let sourceSubscription = SingleAssignmentDisposable()
            sink.setUpstream(Disposables.create(sourceSubscription, sink.secondSubscription))
            sink.secondSubscription.setDisposable(second.subscribe(AnyObserver { sink.send(.second($0)) }))
            sourceSubscription.setDisposable(source.subscribe(AnyObserver { sink.send(.source($0)) }))
            return sink
        }
    }

    /// On each element of this sequence, emits the most recent element of `second`; see
    /// `withLatestFrom(_:resultSelector:)`.
    @inlinable
    public func withLatestFrom<Second: ObservableType>(_ second: Second) -> Observable<Second.Element> {
        withLatestFrom(second) { $1 }
    }
}

/// withLatestFrom behind a `SerialGate`.
@usableFromInline
final class WithLatestFromSink<Element, Second, Result>: DownstreamSink<Result>, GatedSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case source(Event<Element>)
        case second(Event<Second>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    /// Disposed when `second` completes; its last element stays `latest`.
    @usableFromInline let secondSubscription = SingleAssignmentDisposable()
    @usableFromInline let selector: (Element, Second) throws -> Result
    // Touched only inside the gate.
    @usableFromInline var latest: Second?

    @inlinable
    init(downstream: AnyObserver<Result>, selector: @escaping (Element, Second) throws -> Result) {
        self.selector = selector
        super.init(downstream: downstream)
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        switch message {
        case .second(.next(let value)):
            latest = value
        case .second(.completed):
            secondSubscription.dispose()
        case .source(.next(let element)):
            guard let latest else { return }
            do { downstream.on(.next(try selector(element, latest))) } catch { stop(.error(error)) }
        case .source(.completed):
            stop(.completed)
        case .source(.error(let error)), .second(.error(let error)):
            stop(.error(error))
        }
    }
}
