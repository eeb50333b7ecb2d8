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
    @usableFromInline static var stoppedBit: Int { 1 }
    @usableFromInline static var disposedBit: Int { 2 }
    @usableFromInline static var assignedBit: Int { 4 }

    @usableFromInline let state = Atomic<Int>(0)
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline var upstream: Disposable?

    @inlinable
    init(_ downstream: AnyObserver<Element>) {
        self.downstream = downstream
        LiveResources.increment()
    }

    deinit { LiveResources.decrement() }

    @inlinable
    var isDisposed: Bool { state.load(ordering: .acquiring) & Self.disposedBit != 0 }

    @inlinable
    func on(_ event: Event<Element>) {
        if state.load(ordering: .relaxed) & (Self.stoppedBit | Self.disposedBit) != 0 { return }
        if case .next = event {
            downstream.on(event)
            return
        }
        let old = state.bitwiseOr(Self.stoppedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & (Self.stoppedBit | Self.disposedBit) == 0 else { return }
        downstream.on(event)
        dispose()
    }

    @inlinable
    func setUpstream(_ disposable: Disposable) {
        upstream = disposable
        let old = state.bitwiseOr(Self.assignedBit, ordering: .acquiringAndReleasing).oldValue
        if old & Self.disposedBit != 0 {
            upstream = nil
            disposable.dispose()
        }
    }

    @inlinable
    func dispose() {
        let old = state.bitwiseOr(Self.disposedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.disposedBit == 0, old & Self.assignedBit != 0 else { return }
        let up = upstream
        upstream = nil
        up?.dispose()
    }
}
