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

/// combineLatest of two typed sources behind a `SerialGate`.
@usableFromInline
final class CombineLatest2Sink<A, B, Result>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case a(Event<A>)
        case b(Event<B>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    /// One subscription per source: a source that completes is unsubscribed at once.
    @usableFromInline let sources: [SingleAssignmentDisposable]
    @usableFromInline let downstream: AnyObserver<Result>
    @usableFromInline let selector: (A, B) throws -> Result
    // Touched only inside the gate.
    @usableFromInline var state = CombineLatestState(count: 2)
    @usableFromInline var a: A?
    @usableFromInline var b: B?
    @usableFromInline var stopped = false

    @inlinable
    init(downstream: AnyObserver<Result>, selector: @escaping (A, B) throws -> Result) {
        self.downstream = downstream
        self.selector = selector
        self.sources = (0..<2).map { _ in SingleAssignmentDisposable() }
        super.init()
    }

    @inlinable
    func send(_ message: Message) {
        gate.send(message) { self.handle($0) }
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

    @inlinable
    func completed(_ index: Int) {
        guard case .complete = state.onCompleted(index) else {
            sources[index].dispose()
            return
        }
        stopped = true
        downstream.on(.completed)
        dispose()
    }

    @inlinable
    func fail(_ error: any Error) {
        stopped = true
        downstream.on(.error(error))
        dispose()
    }
}

/// combineLatest of three typed sources behind a `SerialGate`.
@usableFromInline
final class CombineLatest3Sink<A, B, C, Result>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case a(Event<A>)
        case b(Event<B>)
        case c(Event<C>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    /// One subscription per source: a source that completes is unsubscribed at once.
    @usableFromInline let sources: [SingleAssignmentDisposable]
    @usableFromInline let downstream: AnyObserver<Result>
    @usableFromInline let selector: (A, B, C) throws -> Result
    // Touched only inside the gate.
    @usableFromInline var state = CombineLatestState(count: 3)
    @usableFromInline var a: A?
    @usableFromInline var b: B?
    @usableFromInline var c: C?
    @usableFromInline var stopped = false

    @inlinable
    init(downstream: AnyObserver<Result>, selector: @escaping (A, B, C) throws -> Result) {
        self.downstream = downstream
        self.selector = selector
        self.sources = (0..<3).map { _ in SingleAssignmentDisposable() }
        super.init()
    }

    @inlinable
    func send(_ message: Message) {
        gate.send(message) { self.handle($0) }
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

    @inlinable
    func completed(_ index: Int) {
        guard case .complete = state.onCompleted(index) else {
            sources[index].dispose()
            return
        }
        stopped = true
        downstream.on(.completed)
        dispose()
    }

    @inlinable
    func fail(_ error: any Error) {
        stopped = true
        downstream.on(.error(error))
        dispose()
    }
}

/// combineLatest of an array of same-typed sources behind a `SerialGate`.
@usableFromInline
final class CombineLatestArraySink<E>: OperatorSink, @unchecked Sendable {
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
    /// One subscription per source: a source that completes is unsubscribed at once.
    @usableFromInline let sources: [SingleAssignmentDisposable]
    @usableFromInline let downstream: AnyObserver<[E]>
    // Touched only inside the gate.
    @usableFromInline var state: CombineLatestState
    @usableFromInline var values: [E?]
    @usableFromInline var stopped = false

    @inlinable
    init(downstream: AnyObserver<[E]>, count: Int) {
        self.downstream = downstream
        self.state = CombineLatestState(count: count)
        self.values = Array(repeating: nil, count: count)
        self.sources = (0..<count).map { _ in SingleAssignmentDisposable() }
        super.init()
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
            stopped = true
            downstream.on(.error(error))
            dispose()
        case .completed:
            guard case .complete = state.onCompleted(message.index) else {
                sources[message.index].dispose()
                return
            }
            stopped = true
            downstream.on(.completed)
            dispose()
        }
    }
}
