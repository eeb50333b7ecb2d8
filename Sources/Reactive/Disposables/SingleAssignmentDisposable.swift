import Synchronization

/// Holds one disposable that is set once, later than this object is handed out.
///
/// Disposing before the disposable is set still disposes it: `setDisposable` then disposes
/// it immediately. One atomic state word decides which side disposes, so the two never race
/// and neither holds a lock while calling `dispose()`.
public final class SingleAssignmentDisposable: Cancelable, @unchecked Sendable {
    @usableFromInline static var disposedBit: Int { 1 }
    @usableFromInline static var assignedBit: Int { 2 }

    @usableFromInline let state = Atomic<Int>(0)
    // Written before `assignedBit` is published (release) and read after it is observed
    // (acquire); cleared only by the side that observed both bits.
    @usableFromInline var current: Disposable?

    /// Creates an empty holder.
    @inlinable
    public init() {
        LiveResources.increment()
    }

    deinit { LiveResources.decrement() }

    /// Whether `dispose()` has been called.
    @inlinable
    public var isDisposed: Bool { state.load(ordering: .acquiring) & Self.disposedBit != 0 }

    /// Sets the disposable. Must be called at most once.
    @inlinable
    public func setDisposable(_ disposable: Disposable) {
        current = disposable
        let old = state.bitwiseOr(Self.assignedBit, ordering: .acquiringAndReleasing).oldValue
        precondition(old & Self.assignedBit == 0, "SingleAssignmentDisposable assigned twice")
        if old & Self.disposedBit != 0 {
            current = nil
            disposable.dispose()
        }
    }

    /// Disposes the held disposable now, or as soon as it is set.
    @inlinable
    public func dispose() {
        let old = state.bitwiseOr(Self.disposedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.disposedBit == 0, old & Self.assignedBit != 0 else { return }
        let disposable = current
        current = nil
        disposable?.dispose()
    }
}
