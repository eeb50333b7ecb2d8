import Synchronization

/// Counts the core's live resources: sinks, subscriptions and disposables that hold state.
///
/// Every such object increments the counter when it is created and decrements it in
/// `deinit`, so the count returns to its baseline only when everything built for a
/// subscription has actually been released — a retain cycle or a forgotten subscription
/// keeps it up. One relaxed atomic add per object lifetime (never per event), cheap enough
/// to stay on in release builds; the daemon reports it in `stats`.
public enum LiveResources {
    @usableFromInline
    static let counter = Atomic<Int>(0)

    /// The number of live resources now.
    @inlinable
    public static var count: Int { counter.load(ordering: .relaxed) }

    /// Records that a tracked object was created.
    @inlinable
    public static func increment() {
        counter.wrappingAdd(1, ordering: .relaxed)
    }

    /// Records that a tracked object was destroyed.
    @inlinable
    public static func decrement() {
        counter.wrappingSubtract(1, ordering: .relaxed)
    }
}
