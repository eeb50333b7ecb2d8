import Synchronization

extension ObservableType {
    /// This sequence's events, then — once it completes — `next`'s.
    ///
    /// See `Observable.concat(_:)`.
    @inlinable
    public func concat(_ next: Observable<Element>) -> Observable<Element> {
        Observable.concat([asObservable(), next])
    }
}

extension Observable {
    /// Each of `sources` in turn: the next is subscribed when the one before completes.
    ///
    /// - Element: the first source's elements, then the second's, and so on.
    /// - Completion: when the last source completes (at once for an empty list).
    /// - Error: the first error of the source subscribed now is passed on; later sources are
    ///   never subscribed.
    /// - Disposal: disposes the source subscribed now; later sources are never subscribed.
    /// - Scheduler: none. The next source is subscribed on the thread that delivered the
    ///   completion. Sources that complete synchronously during `subscribe` are chained in a
    ///   loop, not by recursion, so a long list of them does not grow the stack.
    @inlinable
    public static func concat(_ sources: [Observable<Element>]) -> Observable<Element> {
        Observable { observer in
            let sink = ConcatSink(downstream: observer, sources: sources)
            sink.subscribeNext()
            return sink
        }
    }
}

/// One source subscribed at a time, so events arrive serially without a gate. Completions
/// go through a trampoline: `subscribeNext()` run while another call is inside it (a source
/// completing during its own `subscribe`) only leaves a count, which that call works off.
@usableFromInline
final class ConcatSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let sources: [Observable<Element>]
    /// The next source to subscribe; touched only inside the trampoline.
    @usableFromInline @exclusivity(unchecked) var index = 0
    @usableFromInline let current = SerialDisposable()
    @usableFromInline let pending = Atomic<Int>(0)

    @inlinable
    init(downstream: AnyObserver<Element>, sources: [Observable<Element>]) {
        self.downstream = downstream
        self.sources = sources
        super.init()
    }

    @usableFromInline
    override func disposeResources() {
        current.dispose()
    }

    @inlinable
    func subscribeNext() {
        if pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue != 0 { return }
        repeat {
            if isDisposed { return }
            guard index < sources.count else {
                downstream.on(.completed)
                dispose()
                return
            }
            let source = sources[index]
            index += 1
            // A holder first: a source that completes during its own `subscribe` makes the
            // next one current, which must not be overwritten by this subscription.
            let holder = SingleAssignmentDisposable()
            current.disposable = holder
            holder.setDisposable(source.subscribe(AnyObserver { self.on($0) }))
        } while pending.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue != 0
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if isDisposed { return }
        switch event {
        case .next:
            downstream.on(event)
        case .error:
            downstream.on(event)
            dispose()
        case .completed:
            subscribeNext()
        }
    }
}
