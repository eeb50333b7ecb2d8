import Synchronization

/// Counts the core's live resources: sinks, subscriptions and disposables that hold state.
///
/// Every such object holds a `LiveResources.Token`, which counts it from creation to `deinit`,
/// so the count returns to its baseline only when everything built for a subscription has
/// actually been released — a retain cycle or a forgotten subscription keeps it up. One
/// relaxed atomic add per object lifetime (never per event), cheap enough to stay on in
/// release builds; the daemon reports it in `stats`.
///
/// **Scopes.** The process-wide `count` only means something when nothing else runs, so a test
/// counts what it owns instead: it binds a `Scope` (`LiveResources.$scope.withValue(scope)`,
/// or the test trait that does it per test) and every object created under it is counted in
/// that scope too, until its `deinit` — whichever thread releases it. The binding is a task
/// local: it holds in the test's own code and on the virtual-time scheduler that runs inside
/// it, and evflow's thread-hopping schedulers carry it to the work they run
/// (`LiveResources.carry`), so what a test's subscription builds on another thread is counted
/// in the test's scope too.
public enum LiveResources {
    @usableFromInline
    static let counter = Atomic<Int>(0)

    /// The scope objects created now are counted in, besides the process-wide count.
    @TaskLocal public static var scope: Scope?

    /// A count of the live resources created while it was bound (see `LiveResources`).
    public final class Scope: Sendable {
        @usableFromInline let counter = Atomic<Int>(0)

        /// An empty scope.
        public init() {}

        /// Objects created under this scope and not yet destroyed.
        public var count: Int { counter.load(ordering: .relaxed) }
    }

    /// Held by every counted object: counts it from creation until it is destroyed.
    public struct Token: ~Copyable, Sendable {
        @usableFromInline let scope: Scope?

        /// Counts one object in the process and in the bound scope, if any.
        @inlinable
        public init() {
            LiveResources.counter.wrappingAdd(1, ordering: .relaxed)
            scope = LiveResources.scope
            scope?.counter.wrappingAdd(1, ordering: .relaxed)
        }

        deinit {
            LiveResources.counter.wrappingSubtract(1, ordering: .relaxed)
            scope?.counter.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    /// The number of live resources in the whole process now.
    @inlinable
    public static var count: Int { counter.load(ordering: .relaxed) }

    /// `work`, made to run under the scope bound now (for a scheduler that runs it on another
    /// thread). Without a bound scope, `work` itself: no cost outside tests.
    @inlinable
    public static func carry<R>(_ work: @escaping () -> R) -> () -> R {
        guard let scope else { return work }
        return { LiveResources.$scope.withValue(scope, operation: work) }
    }

    /// `handler`, made to run under the scope bound now (timer and fd handlers).
    @inlinable
    public static func carry<T, R>(_ handler: @escaping (T) -> R) -> (T) -> R {
        guard let scope else { return handler }
        return { value in LiveResources.$scope.withValue(scope) { handler(value) } }
    }
}
