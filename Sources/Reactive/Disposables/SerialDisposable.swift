import Synchronization

/// Holds one replaceable disposable: setting a new one disposes the previous one; after
/// `dispose()`, every disposable set is disposed at once.
///
/// The swap happens in a short critical section; `dispose()` of the old value runs after it.
public final class SerialDisposable: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    private struct State {
        var current: Disposable?
        var disposed = false
    }

    private let state = PosixLocked(State())

    /// Creates an empty holder.
    public init() {
    }

    /// Whether `dispose()` has been called.
    public var isDisposed: Bool { state.withLock { $0.disposed } }

    /// The disposable held now.
    public var disposable: Disposable {
        get { state.withLock { $0.current } ?? Disposables.create() }
        set {
            let previous: Disposable? = state.withLock { s in
                if s.disposed { return newValue }
                defer { s.current = newValue }
                return s.current
            }
            previous?.dispose()
        }
    }

    /// Disposes the held disposable and every one set later.
    public func dispose() {
        let current: Disposable? = state.withLock { s in
            if s.disposed { return nil }
            s.disposed = true
            defer { s.current = nil }
            return s.current
        }
        current?.dispose()
    }
}
