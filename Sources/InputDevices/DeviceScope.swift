import Reactive
import Synchronization

/// Everything a monitor subscription opened for one device: the pending open, then the reader
/// (fd and libevdev handle), or the end of an inaccessible device's stream.
///
/// Disposing the scope (on removal, or when monitoring stops) disposes its members in the
/// order they were inserted: stopping the reader completes the device's frames (ending its
/// consumer's inner subscription) and closes the fd. Inserting into a disposed scope
/// disposes at once.
public final class DeviceScope: Cancelable, @unchecked Sendable {
    private let members = CompositeDisposable()
    private let counter: ScopeCounter

    init(counter: ScopeCounter) {
        self.counter = counter
        counter.value.wrappingAdd(1, ordering: .relaxed)
    }

    deinit { counter.value.wrappingSubtract(1, ordering: .relaxed) }

    /// Adds a member; returns nil (after disposing it) if the scope is already disposed.
    @discardableResult
    public func insert(_ disposable: Disposable) -> CompositeDisposable.Key? {
        members.insert(disposable)
    }

    /// Removes a member and disposes it (a subscriber that ended before the device did).
    public func remove(_ key: CompositeDisposable.Key) {
        members.remove(for: key)
    }

    /// The number of members (for tests and stats).
    public var memberCount: Int { members.count }

    /// Whether the scope has been disposed.
    public var isDisposed: Bool { members.isDisposed }

    /// Disposes every member.
    public func dispose() { members.dispose() }
}

/// Counts the live `DeviceScope` objects of one monitor (alive = not yet deallocated, so a
/// scope kept by a leaked reference still counts).
final class ScopeCounter: Sendable {
    let value = Atomic<Int>(0)
}
