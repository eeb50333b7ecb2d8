import Synchronization

/// Base of the stateful operator sinks: owns the upstream subscription and a disposed flag
/// in one atomic state word, so disposing before the upstream subscription is set still
/// disposes it (RxSwift's `SinkDisposer` rule) and `dispose()` is idempotent from any thread.
///
/// Subclasses release their own resources in `disposeResources()`, called once.
@usableFromInline
class OperatorSink: Cancelable, @unchecked Sendable {
    @usableFromInline static var disposedBit: Int { 1 }
    @usableFromInline static var assignedBit: Int { 2 }

    @usableFromInline let sinkState = Atomic<Int>(0)
    @usableFromInline @exclusivity(unchecked) var upstream: Disposable?

    @inlinable
    init() {
        LiveResources.increment()
    }

    deinit { LiveResources.decrement() }

    /// Whether `dispose()` has been called. Checked before every emission.
    @inlinable
    final var isDisposed: Bool { sinkState.load(ordering: .relaxed) & Self.disposedBit != 0 }

    /// Sets the upstream subscription (once); disposes it at once if already disposed.
    @inlinable
    final func setUpstream(_ disposable: Disposable) {
        upstream = disposable
        let old = sinkState.bitwiseOr(Self.assignedBit, ordering: .acquiringAndReleasing).oldValue
        if old & Self.disposedBit != 0 {
            upstream = nil
            disposable.dispose()
        }
    }

    /// Ends the subscription: upstream first, then the subclass's resources.
    @inlinable
    final func dispose() {
        let old = sinkState.bitwiseOr(Self.disposedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.disposedBit == 0 else { return }
        if old & Self.assignedBit != 0 {
            let up = upstream
            upstream = nil
            up?.dispose()
        }
        disposeResources()
    }

    /// Releases the subclass's own resources (timers, inner subscriptions). Called once.
    @usableFromInline
    func disposeResources() {}
}
