extension ObservableType where Element: ObservableType {
    /// Merges the elements of every inner sequence into one sequence, as they arrive.
    ///
    /// - Element: every element of every inner sequence, in arrival order; deliveries from
    ///   different inners (and threads) are serialised through one `SerialGate`.
    /// - Completion: when the outer sequence and every inner sequence have completed.
    /// - Error: the first error of the outer or of any inner is passed on at once and every
    ///   other subscription is disposed.
    /// - Disposal: disposes the outer and every inner subscription.
    /// - Scheduler: none; events are delivered on the thread that sent them (or on the thread
    ///   that is inside the gate at that moment).
    @inlinable
    public func merge() -> Observable<Element.Element> {
        merge(maxConcurrent: .max)
    }

    /// Like `merge()`, but subscribes to at most `maxConcurrent` inner sequences at once;
    /// further inners wait, in order, until a running one completes.
    ///
    /// `maxConcurrent` below 1 is treated as 1 (that is `concat`).
    @inlinable
    public func merge(maxConcurrent: Int) -> Observable<Element.Element> {
        let source = self
        return Observable { observer in
            let sink = MergeSink<Element, Element.Element>(
                downstream: observer, maxConcurrent: maxConcurrent, project: { $0.asObservable() })
            sink.run(source)
            return sink
        }
    }
}

extension Observable {
    /// Merges `sources`: every element of every source as it arrives; completes when all
    /// have completed; the first error ends everything. See `merge()`.
    @inlinable
    public static func merge(_ sources: Observable<Element>...) -> Observable<Element> {
        merge(sources)
    }

    /// Merges `sources`: every element of every source as it arrives; completes when all
    /// have completed (at once for an empty array); the first error ends everything.
    @inlinable
    public static func merge(_ sources: [Observable<Element>]) -> Observable<Element> {
        Observable<Observable<Element>>.from(sources).merge()
    }
}

/// Merge, flatMap and flatMapLatest: the outer's elements are projected to inner sequences,
/// whose events are serialised with the outer's through one `SerialGate`.
///
/// Inner subscriptions live in a `CompositeDisposable` (one `SingleAssignmentDisposable`
/// each, so an inner that finishes during its own `subscribe` is still released). Inners are
/// subscribed inside the gate: their synchronous events are queued, not nested. Each inner's
/// events carry the id it was subscribed with; when the sink switches to the latest inner
/// (`flatMapLatest`), an event of a replaced inner that was already queued in the gate is
/// ignored by that id.
@usableFromInline
final class MergeSink<Source, Element>: DownstreamSink<Element>, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case outer(Event<Source>)
        case inner(UInt64, Event<Element>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let outerSubscription = SingleAssignmentDisposable()
    @usableFromInline let maxConcurrent: Int
    /// flatMapLatest: a new inner replaces the running one (disposed before the new one is
    /// subscribed) instead of running beside it.
    @usableFromInline let switchesToLatest: Bool
    @usableFromInline let project: (Source) throws -> Observable<Element>
    @usableFromInline let inners = CompositeDisposable()
    // Touched only inside the gate.
    @usableFromInline var keys: [UInt64: CompositeDisposable.Key] = [:]
    @usableFromInline var nextID: UInt64 = 0
    @usableFromInline var active = 0
    @usableFromInline var waiting: [Observable<Element>] = []
    @usableFromInline var waitingHead = 0
    @usableFromInline var outerDone = false

    @inlinable
    init(downstream: AnyObserver<Element>, maxConcurrent: Int, switchesToLatest: Bool = false,
         project: @escaping (Source) throws -> Observable<Element>) {
        self.maxConcurrent = max(maxConcurrent, 1)
        self.switchesToLatest = switchesToLatest
        self.project = project
        super.init(downstream: downstream)
    }

    /// Subscribes the outer sequence. Its own slot, so that its completion can release it
    /// while inners keep running.
    @inlinable
    func run<Outer: ObservableType>(_ outer: Outer) where Outer.Element == Source {
        setUpstream(outerSubscription)
        outerSubscription.setDisposable(outer.subscribe(AnyObserver { self.onOuter($0) }))
    }

    @inlinable
    func onOuter(_ event: Event<Source>) {
        gate.send(.outer(event)) { self.handle($0) }
    }

    @usableFromInline
    override func disposeResources() {
        inners.dispose()
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        switch message {
        case .outer(.next(let value)):
            let inner: Observable<Element>
            do { inner = try project(value) } catch { fail(error); return }
            if switchesToLatest, let key = keys.removeValue(forKey: nextID &- 1) {
                inners.remove(for: key)   // disposes the previous inner now
                active -= 1
            }
            if active < maxConcurrent {
                subscribeInner(inner)
            } else {
                waiting.append(inner)
            }
        case .outer(.error(let error)):
            fail(error)
        case .outer(.completed):
            outerDone = true
            outerSubscription.dispose()
            completeIfDone()
        case .inner(let id, let event):
            if switchesToLatest, id != nextID &- 1 { return }   // a replaced inner's
            switch event {
            case .next(let element):
                downstream.on(.next(element))
            case .error(let error):
                fail(error)
            case .completed:
                if let key = keys.removeValue(forKey: id) { inners.remove(for: key) }
                active -= 1
                if waitingHead < waiting.count {
                    let next = waiting[waitingHead]
                    waitingHead += 1
                    if waitingHead == waiting.count {
                        waiting.removeAll(keepingCapacity: true)
                        waitingHead = 0
                    }
                    subscribeInner(next)
                } else {
                    completeIfDone()
                }
            }
        }
    }

    @inlinable
    func subscribeInner(_ inner: Observable<Element>) {
        active += 1
        let id = nextID
        nextID &+= 1
        let holder = SingleAssignmentDisposable()
        guard let key = inners.insert(holder) else { return }   // disposed meanwhile
        keys[id] = key
        holder.setDisposable(inner.subscribe(AnyObserver { event in
            self.gate.send(.inner(id, event)) { self.handle($0) }
        }))
    }

    @inlinable
    func completeIfDone() {
        guard outerDone, active == 0, waitingHead == waiting.count else { return }
        stop(.completed)
    }
}
