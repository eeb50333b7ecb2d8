import Synchronization

/// A group of disposables disposed together; members can be removed (and disposed) one by one.
///
/// Inserting into a disposed group disposes the newcomer at once and returns nil.
public final class CompositeDisposable: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    /// Identifies one member, for `remove(for:)`.
    public struct Key: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    private struct State {
        var members: [UInt64: Disposable] = [:]
        var order: [UInt64] = []
        var nextKey: UInt64 = 0
        var disposed = false
    }

    private let state = PosixLocked(State())

    /// Creates an empty group.
    public init() {
    }

    /// Creates a group holding `disposables`.
    public init(disposables: [Disposable]) {
        state.withLock { s in
            for d in disposables {
                s.members[s.nextKey] = d
                s.order.append(s.nextKey)
                s.nextKey += 1
            }
        }
    }

    /// Whether `dispose()` has been called.
    public var isDisposed: Bool { state.withLock { $0.disposed } }

    /// The number of members.
    public var count: Int { state.withLock { $0.members.count } }

    /// Adds a member; returns nil (after disposing it) if the group is already disposed.
    @discardableResult
    public func insert(_ disposable: Disposable) -> Key? {
        let key: UInt64? = state.withLock { s in
            if s.disposed { return nil }
            let k = s.nextKey
            s.nextKey += 1
            s.members[k] = disposable
            s.order.append(k)
            return k
        }
        guard let key else {
            disposable.dispose()
            return nil
        }
        return Key(value: key)
    }

    /// Removes the member and disposes it.
    public func remove(for key: Key) {
        let removed: Disposable? = state.withLock { s in
            guard let d = s.members.removeValue(forKey: key.value) else { return nil }
            if let i = s.order.firstIndex(of: key.value) { s.order.remove(at: i) }
            return d
        }
        removed?.dispose()
    }

    /// Disposes every member and every member inserted later.
    public func dispose() {
        let members: [Disposable] = state.withLock { s in
            if s.disposed { return [] }
            s.disposed = true
            let list = s.order.compactMap { s.members[$0] }
            s.members = [:]
            s.order = []
            return list
        }
        for d in members { d.dispose() }
    }
}
