import Synchronization

/// A one-shot readiness signal awaited by later services.
final class Latch: Sendable {
    private enum Waiter {
        case cancellable(CheckedContinuation<Bool, Never>)
        case uncancellable(CheckedContinuation<Void, Never>)
    }

    private struct State {
        var open = false
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0

        mutating func add(_ waiter: Waiter) -> UInt64 {
            nextWaiter += 1
            waiters[nextWaiter] = waiter
            return nextWaiter
        }
    }

    private let state = Mutex(State())

    /// Whether the latch has opened.
    var isOpen: Bool { state.withLock { $0.open } }

    func open() {
        let waiters = state.withLock { s -> [Waiter] in
            s.open = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters {
            switch waiter {
            case .cancellable(let c): c.resume(returning: true)
            case .uncancellable(let c): c.resume()
            }
        }
    }

    /// Waits until the latch opens (true) or the task is cancelled first (false): a service
    /// waiting for an earlier one that failed must not wait for ever (the group cancels it).
    func wait() async -> Bool {
        let id = Mutex<UInt64?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    if s.open { return true }
                    if Task.isCancelled { return false }
                    id.withLock { $0 = s.add(.cancellable(c)) }
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let key = id.withLock({ $0 }) else { return nil }
                return s.waiters.removeValue(forKey: key)
            }
            if case .cancellable(let c) = waiter { c.resume(returning: false) }
        }
    }

    /// Waits until the latch opens, cancelled or not (for work that must finish, e.g. the
    /// disposal of every device session on the input thread).
    func opened() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.open { return true }
                _ = s.add(.uncancellable(c))
                return false
            }
            if now { c.resume() }
        }
    }
}
