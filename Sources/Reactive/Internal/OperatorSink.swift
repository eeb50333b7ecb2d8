/// Base of the stateful operator sinks: owns the upstream subscription and its
/// `DisposalState`, so disposing before the upstream subscription is set still disposes it
/// (RxSwift's `SinkDisposer` rule) and `dispose()` is idempotent from any thread.
///
/// Subclasses release their own resources in `disposeResources()`, called once.
@usableFromInline
package class OperatorSink: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    @usableFromInline let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    // Written by `setUpstream` before `assigned` is published; taken by the disposing side.
    @usableFromInline @exclusivity(unchecked) final var upstream: Disposable?

    @inlinable
    init() {
    }

    /// Whether `dispose()` has been called. Checked before every emission.
    @inlinable
    package final var isDisposed: Bool { disposal.isDisposedRelaxed }

    /// Sets the upstream subscription (once); disposes it at once if already disposed.
    @inlinable
    package final func setUpstream(_ disposable: Disposable) {
        disposal.assign(disposable) { upstream = $0 }
    }

    /// Ends the subscription: upstream first, then the subclass's resources.
    @inlinable
    package final func dispose() {
        if disposal.dispose { upstream.take() } { disposeResources() }
    }

    /// Releases the subclass's own resources (timers, inner subscriptions). Called once.
    @usableFromInline
    func disposeResources() {}
}

/// Base of the sinks that serialise several inputs (outer and inners, several sources) into
/// one downstream observer and end it themselves: the observer and the stop rule — a stop
/// event goes downstream once, marks the sink `stopped` (later inputs are ignored), then
/// disposes everything. `stopped` is touched only by the thread inside the subclass's gate.
@usableFromInline
package class DownstreamSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let downstream: AnyObserver<Element>
    // Touched only inside the subclass's gate.
    @usableFromInline final var stopped = false

    @inlinable
    init(downstream: AnyObserver<Element>) {
        self.downstream = downstream
        super.init()
    }

    /// Sends `event` (`completed` or `error`) downstream as the last event, then disposes.
    @inlinable
    final func stop(_ event: Event<Element>) {
        stopped = true
        downstream.on(event)
        dispose()
    }

    /// Ends with `error`; see `stop(_:)`.
    @inlinable
    final func fail(_ error: any Error) {
        stop(.error(error))
    }
}
