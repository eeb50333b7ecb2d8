import Synchronization

/// Owns disposables and disposes them all when it is deallocated.
///
/// To cancel everything an owner subscribed, replace its bag with a new one
/// (`bag = DisposeBag()`): the old bag is released and disposes its contents.
public final class DisposeBag: @unchecked Sendable {
    private struct State {
        var disposables: [Disposable] = []
        var disposed = false
    }

    private let state = PosixLocked(State())

    /// Creates an empty bag.
    public init() {}

    /// Adds a disposable; if the bag is already being torn down, disposes it at once.
    public func insert(_ disposable: Disposable) {
        let accepted = state.withLock { s -> Bool in
            if s.disposed { return false }
            s.disposables.append(disposable)
            return true
        }
        if !accepted { disposable.dispose() }
    }

    /// Adds several disposables.
    public func insert(_ disposables: Disposable...) {
        for d in disposables { insert(d) }
    }

    deinit {
        let list = state.withLock { s -> [Disposable] in
            s.disposed = true
            defer { s.disposables = [] }
            return s.disposables
        }
        for d in list { d.dispose() }
    }
}
