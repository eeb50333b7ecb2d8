extension ObservableType {
    /// Passes the source's events until `other` emits an element (RxSwift 6 `take(until:)`).
    ///
    /// - Element: the source's elements until `other`'s first element.
    /// - Completion: when `other` emits its first element (both subscriptions are disposed),
    ///   or with the source's completion. `other`'s completion does nothing: the source keeps
    ///   going and only `other`'s subscription is released.
    /// - Error: the source's error, or `other`'s error, ends the sequence with that error.
    /// - Disposal: disposes both. `other` is subscribed first; if it stops the sequence
    ///   during its own `subscribe`, the source is never subscribed.
    /// - Scheduler: none; events of both sides are serialised through a `SerialGate`.
    @inlinable
    public func takeUntil<Other: ObservableType>(_ other: Other) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = TakeUntilSink<Element, Other.Element>(downstream: observer)
            sink.otherSubscription.setDisposable(other.subscribe(AnyObserver { sink.onOther($0) }))
            if !sink.isDisposed {
                sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            }
            return sink
        }
    }

    /// `takeUntil(_:)` under its RxSwift 6 name.
    @inlinable
    public func take<Other: ObservableType>(until other: Other) -> Observable<Element> {
        takeUntil(other)
    }
}

@usableFromInline
final class TakeUntilSink<Element, OtherElement>: DownstreamSink<Element>, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case source(Event<Element>)
        case otherNext
        case otherError(any Error)
        case otherCompleted
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let otherSubscription = SingleAssignmentDisposable()

    @inlinable
    func on(_ event: Event<Element>) {
        gate.send(.source(event)) { self.handle($0) }
    }

    @inlinable
    func onOther(_ event: Event<OtherElement>) {
        let message: Message
        switch event {
        case .next: message = .otherNext
        case .error(let error): message = .otherError(error)
        case .completed: message = .otherCompleted
        }
        gate.send(message) { self.handle($0) }
    }

    @usableFromInline
    override func disposeResources() {
        otherSubscription.dispose()
    }

    @inlinable
    func handle(_ message: Message) {
        guard !stopped, !isDisposed else { return }
        switch message {
        case .source(let event):
            if event.isStopEvent { stop(event) } else { downstream.on(event) }
        case .otherNext:
            stop(.completed)
        case .otherError(let error):
            fail(error)
        case .otherCompleted:
            otherSubscription.dispose()
        }
    }
}
