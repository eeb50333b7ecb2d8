#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, for short critical sections: the disposables and
/// `share` here (never on the event delivery path), and the package's other modules that run
/// under ThreadSanitizer (the hub's registry, the state server's client outboxes).
///
/// The rule: every lock in a module whose tests run under ThreadSanitizer (scripts/test:
/// Reactive, InputDevices, Pipeline, StateServer) is a `PosixLocked`, never a `Mutex`.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux does not see the
/// futex-based `Mutex` as synchronisation and reports every contended use as a data race
/// (reproduced with a four-thread `Mutex<[Int: Int]>` program: a contended `Mutex` hands the
/// lock over in the kernel — a priority-inheritance futex — with no user-space atomic TSan could
/// pair), which hid real reports in the TSan runs. TSan intercepts `pthread_mutex_lock`, so this is checked properly.
package final class PosixLocked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    package init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state. `body` must not call out to user code,
    /// downstream observers or `dispose()`.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
