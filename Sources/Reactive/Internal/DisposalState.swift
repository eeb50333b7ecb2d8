import Synchronization

/// The disposal state word every subscription-owning object of the core shares: one atomic
/// `Int` with three bits — `stopped` (a stop event went downstream), `disposed`, `assigned`
/// (the upstream disposable has been stored).
///
/// It decides, without a lock, which of two racing sides releases the upstream subscription:
/// `assign(_:to:)` stores the disposable *before* publishing `assigned` (release), and
/// `dispose(_:)` reads the slot only after it has seen `assigned` (acquire), so exactly one
/// side disposes it — also when `dispose()` runs before the subscription is set up (RxSwift's
/// `SinkDisposer` rule). Every transition is one `bitwiseOr`; `dispose` is idempotent.
///
/// Used by `OperatorSink` (and through it every stateful operator and `TimedSink`),
/// `GuardedObserver` (`subscribe(onNext:...)` and `Observable.create`),
/// `SingleAssignmentDisposable`, and the one-shot `AnonymousDisposable`/`BinaryDisposable`.
/// Stored as a `let` of its owner (it is `~Copyable`, like the `Atomic` inside).
@usableFromInline
package struct DisposalState: ~Copyable {
    @usableFromInline static var stoppedBit: Int { 1 }
    @usableFromInline static var disposedBit: Int { 2 }
    @usableFromInline static var assignedBit: Int { 4 }

    @usableFromInline let word = Atomic<Int>(0)

    /// A live state: not stopped, not disposed, nothing assigned.
    @inlinable
    package init() {}

    /// Whether `dispose` has run, with acquire ordering (for `Cancelable.isDisposed`).
    @inlinable
    package var isDisposed: Bool { word.load(ordering: .acquiring) & Self.disposedBit != 0 }

    /// Whether `dispose` has run, as a relaxed load: the per-event check before an emission.
    @inlinable
    package var isDisposedRelaxed: Bool { word.load(ordering: .relaxed) & Self.disposedBit != 0 }

    /// Whether a stop event was delivered or `dispose` has run (relaxed; per event).
    @inlinable
    package var isStoppedOrDisposed: Bool {
        word.load(ordering: .relaxed) & (Self.stoppedBit | Self.disposedBit) != 0
    }

    /// Marks the subscription stopped; true for the one caller that stopped a live
    /// subscription (not stopped before, not disposed), which then delivers the stop event.
    @inlinable
    package func stop() -> Bool {
        let old = word.bitwiseOr(Self.stoppedBit, ordering: .acquiringAndReleasing).oldValue
        return old & (Self.stoppedBit | Self.disposedBit) == 0
    }

    /// Stores `disposable` with `store` and publishes it. If `dispose` already ran, the slot
    /// is cleared again (`store(nil)`) and `disposable` is disposed here, at once. Returns
    /// whether a disposable had been assigned before (owners that allow one assignment check
    /// it).
    ///
    /// The slot is reached through closures, not `inout`: an `inout` argument is an access
    /// for the whole call, so a `dispose` racing on another thread would overlap it (a Swift
    /// access race to ThreadSanitizer) even when only one side touches the slot. Each closure
    /// touches it once, on the side the state word lets in.
    @inlinable
    @discardableResult
    package func assign(_ disposable: Disposable, store: (Disposable?) -> Void) -> Bool {
        store(disposable)
        let old = word.bitwiseOr(Self.assignedBit, ordering: .acquiringAndReleasing).oldValue
        if old & Self.disposedBit != 0 {
            store(nil)
            disposable.dispose()
        }
        return old & Self.assignedBit != 0
    }

    /// Marks the state disposed and, the first time, takes the disposable out of the slot with
    /// `take` (if one was assigned) and disposes it. Returns true for the first call only: that
    /// caller releases the owner's other resources. Later calls do nothing and never touch the
    /// slot.
    @inlinable
    package func dispose(take: () -> Disposable?) -> Bool {
        let old = word.bitwiseOr(Self.disposedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.disposedBit == 0 else { return false }
        if old & Self.assignedBit != 0 {
            take()?.dispose()
        }
        return true
    }

    /// Marks the state disposed, for owners without an upstream slot; true for the first call.
    @inlinable
    package func dispose() -> Bool {
        word.bitwiseOr(Self.disposedBit, ordering: .acquiringAndReleasing).oldValue & Self.disposedBit == 0
    }
}
