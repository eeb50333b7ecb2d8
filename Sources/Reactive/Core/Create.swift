import Synchronization

extension Observable {
    /// Creates a sequence from a subscribe function written by the user.
    ///
    /// The observer handed to `subscribe` enforces the grammar (nothing after `error` or
    /// `completed`) and goes quiet once the subscription is disposed. After a stop event
    /// the disposable returned by `subscribe` is disposed, even if the stop event came
    /// before `subscribe` returned.
    @inlinable
    public static func create(_ subscribe: @escaping (AnyObserver<Element>) -> Disposable) -> Observable<Element> {
        Observable { downstream in
            let sink = CreateSink(downstream)
            let upstream = subscribe(AnyObserver { sink.on($0) })
            sink.setUpstream(upstream)
            return sink
        }
    }
}

/// Guards a user-written source: grammar, disposal, and dispose-after-stop.
@usableFromInline
final class CreateSink<Element>: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline @exclusivity(unchecked) var upstream: Disposable?

    @inlinable
    init(_ downstream: AnyObserver<Element>) {
        self.downstream = downstream
    }

    @inlinable
    var isDisposed: Bool { disposal.isDisposed }

    @inlinable
    func on(_ event: Event<Element>) {
        if disposal.isStoppedOrDisposed { return }
        if case .next = event {
            downstream.on(event)
            return
        }
        guard disposal.stop() else { return }
        downstream.on(event)
        dispose()
    }

    @inlinable
    func setUpstream(_ disposable: Disposable) {
        disposal.assign(disposable) { upstream = $0 }
    }

    @inlinable
    func dispose() {
        _ = disposal.dispose { upstream.take() }
    }
}
