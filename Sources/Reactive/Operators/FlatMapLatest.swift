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
            let sink = FlatMapLatestSink<Element, Source.Element>(
                downstream: observer, project: { try selector($0).asObservable() })
            sink.run(source)
            return sink
        }
    }
}

/// Switches to the newest inner. Inner events carry the generation they were subscribed
/// in, so an event of a replaced inner that was already queued in the gate is ignored.
@usableFromInline
final class FlatMapLatestSink<Source, Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case outer(Event<Source>)
        case inner(UInt64, Event<Element>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let outerSubscription = SingleAssignmentDisposable()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let project: (Source) throws -> Observable<Element>
    @usableFromInline let current = SerialDisposable()
    // Touched only inside the gate.
    @usableFromInline var generation: UInt64 = 0
    @usableFromInline var innerActive = false
    @usableFromInline var outerDone = false
    @usableFromInline var stopped = false

    @inlinable
    init(downstream: AnyObserver<Element>, project: @escaping (Source) throws -> Observable<Element>) {
        self.downstream = downstream
        self.project = project
        super.init()
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
        current.dispose()
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        switch message {
        case .outer(.next(let value)):
            let inner: Observable<Element>
            do { inner = try project(value) } catch { fail(error); return }
            generation &+= 1
            innerActive = true
            let holder = SingleAssignmentDisposable()
            current.disposable = holder   // disposes the previous inner now
            let id = generation
            holder.setDisposable(inner.subscribe(AnyObserver { event in
                self.gate.send(.inner(id, event)) { self.handle($0) }
            }))
        case .outer(.error(let error)):
            fail(error)
        case .outer(.completed):
            outerDone = true
            outerSubscription.dispose()
            if !innerActive { complete() }
        case .inner(let id, let event):
            guard id == generation else { return }
            switch event {
            case .next(let element):
                downstream.on(.next(element))
            case .error(let error):
                fail(error)
            case .completed:
                innerActive = false
                current.disposable = Disposables.create()
                if outerDone { complete() }
            }
        }
    }

    @inlinable
    func complete() {
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
