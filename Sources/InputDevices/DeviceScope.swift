import Reactive
import Synchronization

/// Everything subscribed or opened for one device: the pending open, the reader (fd and
/// libevdev handle), every `frames(for:)` subscription.
///
/// Disposing the scope (on removal, or when monitoring stops) disposes its members in the
/// order they were inserted: the reader first, which completes the device's frame sequence and
/// closes the fd, then the subscriptions. Inserting into a disposed scope disposes at once.
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
