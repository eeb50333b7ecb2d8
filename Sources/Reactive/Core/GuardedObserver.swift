/// Where a `GuardedObserver` hands the events it lets through: the closures of
/// `subscribe(onNext:...)` or the downstream of `Observable.create`.
@usableFromInline
protocol GuardedTarget {
    associatedtype Element
    /// An element, while the subscription is neither stopped nor disposed.
    func onNext(_ element: Element)
    /// The one stop event (`error` or `completed`), before the subscription disposes itself.
    func onStop(_ event: Event<Element>)
}

/// The one observer skeleton of the core's ends (`subscribe(onNext:...)`) and of
/// `Observable.create`: enforces the grammar (nothing after a stop event), goes quiet once
/// disposed, disposes itself after a stop event, and owns the upstream subscription.
///
/// Its `DisposalState` word holds `stopped` (a stop event was delivered), `disposed` and
/// `assigned` (the upstream disposable is set): a stop event or `dispose()` before the
/// upstream is set still disposes it once it is. The per-event cost is one relaxed load.
/// Generic over the target, not an existential: specialised where it is used.
@usableFromInline
final class GuardedObserver<Target: GuardedTarget>: Cancelable, @unchecked Sendable {
    @usableFromInline typealias Element = Target.Element

    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    @usableFromInline let target: Target
    // Cleared by the single thread that disposes.
    @usableFromInline @exclusivity(unchecked) var onDisposed: (() -> Void)?
    @usableFromInline @exclusivity(unchecked) var upstream: Disposable?

    @inlinable
    init(_ target: Target, onDisposed: (() -> Void)? = nil) {
        self.target = target
        self.onDisposed = onDisposed
    }

    @inlinable
    var isDisposed: Bool { disposal.isDisposed }

    @inlinable
    func on(_ event: Event<Element>) {
        if disposal.isStoppedOrDisposed { return }
        if case .next(let element) = event {
            target.onNext(element)
            return
        }
        guard disposal.stop() else { return }
        target.onStop(event)
        dispose()
    }

    /// Sets the upstream subscription; disposes it at once if disposed (or stopped and
    /// disposed) while subscribing.
    @inlinable
    func setUpstream(_ disposable: Disposable) {
        disposal.assign(disposable) { upstream = $0 }
    }

    @inlinable
    func dispose() {
        guard disposal.dispose(take: { upstream.take() }) else { return }
        let handler = onDisposed
        onDisposed = nil
        handler?()
    }
}
