extension Observable {
    /// Combines the latest elements of two sequences with `resultSelector` whenever either
    /// emits, once both have emitted.
    ///
    /// - Element: `resultSelector(latestA, latestB)` for each element of either source once
    ///   both have emitted at least once; earlier elements only update the latest value.
    /// - Completion: when both have completed, or at once when one completes without ever
    ///   having emitted (no combination is possible any more).
    /// - Error: the first error of either source, or one thrown by `resultSelector`, at once;
    ///   both subscriptions are disposed.
    /// - Disposal: disposes both subscriptions.
    /// - Scheduler: none; events are serialised through one `SerialGate`. Sources are
    ///   subscribed in argument order.
    @inlinable
    public static func combineLatest<A: ObservableType, B: ObservableType>(
        _ a: A, _ b: B, resultSelector: @escaping (A.Element, B.Element) throws -> Element
    ) -> Observable<Element> {
        Observable { observer in
            let sink = CombineLatest2Sink(downstream: observer, selector: resultSelector)
            sink.setUpstream(Disposables.create(sink.sources))
            sink.sources[0].setDisposable(a.subscribe(AnyObserver { sink.send(.a($0)) }))
            sink.sources[1].setDisposable(b.subscribe(AnyObserver { sink.send(.b($0)) }))
            return sink
        }
    }

    /// Combines the latest elements of three sequences; see the two-source form.
    @inlinable
    public static func combineLatest<A: ObservableType, B: ObservableType, C: ObservableType>(
        _ a: A, _ b: B, _ c: C, resultSelector: @escaping (A.Element, B.Element, C.Element) throws -> Element
    ) -> Observable<Element> {
        Observable { observer in
            let sink = CombineLatest3Sink(downstream: observer, selector: resultSelector)
            sink.setUpstream(Disposables.create(sink.sources))
            sink.sources[0].setDisposable(a.subscribe(AnyObserver { sink.send(.a($0)) }))
            sink.sources[1].setDisposable(b.subscribe(AnyObserver { sink.send(.b($0)) }))
            sink.sources[2].setDisposable(c.subscribe(AnyObserver { sink.send(.c($0)) }))
            return sink
        }
    }

    /// Combines the latest elements of all `sources` into an array (in source order)
    /// whenever one emits, once all have emitted. An empty array completes at once.
    /// Completion, error, disposal: as the two-source form.
    @inlinable
    public static func combineLatest<E>(_ sources: [Observable<E>]) -> Observable<Element> where Element == [E] {
        Observable { observer in
            if sources.isEmpty {
                observer.on(.completed)
                return Disposables.create()
            }
            let sink = CombineLatestArraySink<E>(downstream: observer, count: sources.count)
            sink.setUpstream(Disposables.create(sink.sources))
            for (index, source) in sources.enumerated() {
                sink.sources[index].setDisposable(source.subscribe(AnyObserver { sink.send(index, $0) }))
            }
            return sink
        }
    }
}

/// What the combineLatest sinks share: one subscription per source, `CombineLatestState`, and
/// the completion rule (a completed source is unsubscribed at once; the sink completes when
/// the state says no combination can come any more).
@usableFromInline
class CombineLatestSink<Result>: DownstreamSink<Result>, @unchecked Sendable {
    /// One subscription per source: a source that completes is unsubscribed at once.
    @usableFromInline let sources: [SingleAssignmentDisposable]
    // Touched only inside the subclass's gate.
    @usableFromInline final var state: CombineLatestState

    @inlinable
    init(downstream: AnyObserver<Result>, count: Int) {
        self.sources = (0..<count).map { _ in SingleAssignmentDisposable() }
        self.state = CombineLatestState(count: count)
        super.init(downstream: downstream)
    }

    /// Source `index` completed.
    @inlinable
    final func completed(_ index: Int) {
        guard case .complete = state.onCompleted(index) else {
            sources[index].dispose()
            return
        }
        stop(.completed)
    }
}

/// combineLatest of two typed sources behind a `SerialGate`.
@usableFromInline
final class CombineLatest2Sink<A, B, Result>: CombineLatestSink<Result>, GatedSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case a(Event<A>)
        case b(Event<B>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let selector: (A, B) throws -> Result
    // Touched only inside the gate.
    @usableFromInline var a: A?
    @usableFromInline var b: B?

    @inlinable
    init(downstream: AnyObserver<Result>, selector: @escaping (A, B) throws -> Result) {
        self.selector = selector
        super.init(downstream: downstream, count: 2)
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        let ready: Bool
        switch message {
        case .a(.next(let value)): a = value; ready = state.onNext(0)
        case .b(.next(let value)): b = value; ready = state.onNext(1)
        case .a(.error(let error)), .b(.error(let error)): return fail(error)
        case .a(.completed): return completed(0)
        case .b(.completed): return completed(1)
        }
        guard ready, let a, let b else { return }
        do { downstream.on(.next(try selector(a, b))) } catch { fail(error) }
    }
}

/// combineLatest of three typed sources behind a `SerialGate`.
@usableFromInline
final class CombineLatest3Sink<A, B, C, Result>: CombineLatestSink<Result>, GatedSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case a(Event<A>)
        case b(Event<B>)
        case c(Event<C>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let selector: (A, B, C) throws -> Result
    // Touched only inside the gate.
    @usableFromInline var a: A?
    @usableFromInline var b: B?
    @usableFromInline var c: C?

    @inlinable
    init(downstream: AnyObserver<Result>, selector: @escaping (A, B, C) throws -> Result) {
        self.selector = selector
        super.init(downstream: downstream, count: 3)
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        let ready: Bool
        switch message {
        case .a(.next(let value)): a = value; ready = state.onNext(0)
        case .b(.next(let value)): b = value; ready = state.onNext(1)
        case .c(.next(let value)): c = value; ready = state.onNext(2)
        case .a(.error(let error)), .b(.error(let error)), .c(.error(let error)): return fail(error)
        case .a(.completed): return completed(0)
        case .b(.completed): return completed(1)
        case .c(.completed): return completed(2)
        }
        guard ready, let a, let b, let c else { return }
        do { downstream.on(.next(try selector(a, b, c))) } catch { fail(error) }
    }
}

/// combineLatest of an array of same-typed sources behind a `SerialGate`.
@usableFromInline
final class CombineLatestArraySink<E>: CombineLatestSink<[E]>, @unchecked Sendable {
    @usableFromInline
    struct Message {
        @usableFromInline let index: Int
        @usableFromInline let event: Event<E>

        @inlinable
        init(index: Int, event: Event<E>) {
            self.index = index
            self.event = event
        }
    }

    @usableFromInline let gate = SerialGate<Message>()
    // Touched only inside the gate.
    @usableFromInline var values: [E?]

    @inlinable
    override init(downstream: AnyObserver<[E]>, count: Int) {
        self.values = Array(repeating: nil, count: count)
        super.init(downstream: downstream, count: count)
    }

    @inlinable
    func send(_ index: Int, _ event: Event<E>) {
        gate.send(Message(index: index, event: event)) { self.handle($0) }
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        switch message.event {
        case .next(let value):
            values[message.index] = value
            if state.onNext(message.index) {
                downstream.on(.next(values.map { $0! }))
            }
        case .error(let error):
            fail(error)
        case .completed:
            completed(message.index)
        }
    }
}
