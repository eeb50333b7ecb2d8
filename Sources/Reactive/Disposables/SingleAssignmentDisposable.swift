/// Holds one disposable that is set once, later than this object is handed out.
///
/// Disposing before the disposable is set still disposes it: `setDisposable` then disposes
/// it immediately. Its `DisposalState` word decides which side disposes, so the two never
/// race and neither holds a lock while calling `dispose()`.
public final class SingleAssignmentDisposable: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    // Written before `assigned` is published (release) and read after it is observed
    // (acquire); cleared only by the side that observed both bits.
    @usableFromInline @exclusivity(unchecked) var current: Disposable?

    /// Creates an empty holder.
    @inlinable
    public init() {
    }

    /// Whether `dispose()` has been called.
    @inlinable
    public var isDisposed: Bool { disposal.isDisposed }

    /// Sets the disposable. Must be called at most once.
    @inlinable
    public func setDisposable(_ disposable: Disposable) {
        let assignedBefore = disposal.assign(disposable) { current = $0 }
        precondition(!assignedBefore, "SingleAssignmentDisposable assigned twice")
    }

    /// Disposes the held disposable now, or as soon as it is set.
    @inlinable
    public func dispose() {
        _ = disposal.dispose { current.take() }
    }
}
