extension ObservableType {
    /// Emits the latest source element each time `sampler` ticks, if a new one arrived since
    /// the previous tick (RxSwift 6 `sample(_:defaultValue:)`).
    ///
    /// - Element: on each `sampler` element, the most recent source element that has not been
    ///   emitted yet; if there is none, `defaultValue` when given, else nothing. A source
    ///   element is emitted at most once.
    /// - Completion: the source's completion is remembered (its subscription is released) and
    ///   the result completes at the next `sampler` tick, after that tick's sample. `sampler`'s
    ///   completion takes a last sample and completes the result (no further sample could
    ///   ever happen; RxSwift would then wait for the source and never complete).
    /// - Error: an error from either side is passed on at once; an unsampled element is
    ///   dropped.
    /// - Disposal: disposes both subscriptions.
    /// - Scheduler: none; both sides are serialised through a `SerialGate`.
    @inlinable
    public func sample<Sampler: ObservableType>(_ sampler: Sampler, defaultValue: Element? = nil) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = SampleSink<Element, Sampler.Element>(downstream: observer, defaultValue: defaultValue)
            sink.sourceSubscription.setDisposable(source.subscribe(AnyObserver { sink.on($0) }))
            // A source that failed during its own subscribe needs no sampler.
            if !sink.isDisposed {
                sink.samplerSubscription.setDisposable(sampler.subscribe(AnyObserver { sink.onSampler($0) }))
            }
            return sink
        }
    }
}

@usableFromInline
final class SampleSink<Element, SamplerElement>: DownstreamSink<Element>, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case source(Event<Element>)
        case tick(last: Bool)
        case samplerError(any Error)
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let defaultValue: Element?
    @usableFromInline let sourceSubscription = SingleAssignmentDisposable()
    @usableFromInline let samplerSubscription = SingleAssignmentDisposable()
    // Touched only inside the gate.
    @usableFromInline var latest: Element? = nil
    @usableFromInline var sourceDone = false

    @inlinable
    init(downstream: AnyObserver<Element>, defaultValue: Element?) {
        self.defaultValue = defaultValue
        super.init(downstream: downstream)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        gate.send(.source(event)) { self.handle($0) }
    }

    @inlinable
    func onSampler(_ event: Event<SamplerElement>) {
        let message: Message
        switch event {
        case .next: message = .tick(last: false)
        case .completed: message = .tick(last: true)
        case .error(let error): message = .samplerError(error)
        }
        gate.send(message) { self.handle($0) }
    }

    @usableFromInline
    override func disposeResources() {
        sourceSubscription.dispose()
        samplerSubscription.dispose()
    }

    @inlinable
    func handle(_ message: Message) {
        guard !stopped, !isDisposed else { return }
        switch message {
        case .source(.next(let element)):
            latest = element
        case .source(.completed):
            // Keep the unsampled element for the next tick; the source itself is done.
            sourceDone = true
            sourceSubscription.dispose()
        case .source(.error(let error)), .samplerError(let error):
            latest = nil
            fail(error)
        case .tick(let last):
            if let element = latest ?? defaultValue {
                latest = nil
                downstream.on(.next(element))
                if isDisposed { return }   // disposed from inside onNext
            }
            if last || sourceDone {
                stop(.completed)
            }
        }
    }
}
