import Dispatch
import Synchronization

/// Common implementation of the two dispatch-queue schedulers.
public class DispatchQueueSchedulerBase: SchedulerType, @unchecked Sendable {
    /// The queue actions run on.
    public let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    public var now: Int64 { monotonicNow() }

    /// Runs `action` on the queue.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> Disposable {
        let cancel = BooleanDisposable()
        let work = UnsafeTransfer(LiveResources.carry(action))
        queue.async {
            if !cancel.isDisposed { work.value() }
        }
        return cancel
    }

    /// Runs `action` on the queue after `dueTime`.
    @discardableResult
    public func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> Disposable {
        let cancel = BooleanDisposable()
        let work = UnsafeTransfer(LiveResources.carry(action))
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(max(dueTime.nanoseconds, 0)))) {
            if !cancel.isDisposed { work.value() }
        }
        return cancel
    }

    /// A reusable timer backed by one `DispatchSourceTimer` on the queue.
    public func makeTimer(_ handler: @escaping (UInt64) -> Void) -> SchedulerTimer {
        DispatchSchedulerTimer(queue: queue, handler: LiveResources.carry(handler))
    }
}

/// Runs actions one at a time, in order, on a serial dispatch queue.
public final class SerialDispatchQueueScheduler: DispatchQueueSchedulerBase, @unchecked Sendable {
    /// Uses `queue`, which must be serial.
    public init(serialQueue queue: DispatchQueue) {
        super.init(queue: queue)
    }

    /// Creates its own serial queue.
    public convenience init(label: String, qos: DispatchQoS = .default) {
        self.init(serialQueue: DispatchQueue(label: label, qos: qos))
    }
}

/// Runs actions on a concurrent dispatch queue: actions may run in parallel, but every
/// operator still delivers serially per subscription.
public final class ConcurrentDispatchQueueScheduler: DispatchQueueSchedulerBase, @unchecked Sendable {
    /// Uses `queue`.
    public override init(queue: DispatchQueue) {
        super.init(queue: queue)
    }

    /// Uses a global queue of the given quality of service.
    public convenience init(qos: DispatchQoS) {
        self.init(queue: DispatchQueue.global(qos: qos.qosClass))
    }
}

/// One `DispatchSourceTimer`, re-armed in place.
final class DispatchSchedulerTimer: SchedulerTimer, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    private let source: DispatchSourceTimer
    private let token = Atomic<UInt64>(0)
    private let deadline = Atomic<Int64>(0)
    private let invalidated = Atomic<Bool>(false)

    init(queue: DispatchQueue, handler: @escaping (UInt64) -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        let work = UnsafeTransfer(handler)
        source.setEventHandler { [weak self] in
            guard let self, !self.invalidated.load(ordering: .acquiring) else { return }
            let token = self.token.load(ordering: .acquiring)
            guard token != 0 else { return }
            // Early (clock rounding) or queued before a re-arm to a later deadline: wait for
            // the deadline that is set now.
            let remaining = self.deadline.load(ordering: .acquiring) - monotonicNow()
            if remaining > 0 {
                self.source.schedule(deadline: .now() + .nanoseconds(Int(remaining)), leeway: .nanoseconds(0))
                return
            }
            work.value(token)
        }
        source.schedule(deadline: .distantFuture)
        source.activate()
    }

    deinit {
        source.cancel()
    }

    func arm(at deadline: Int64, token: UInt64) {
        self.deadline.store(deadline, ordering: .releasing)
        self.token.store(token, ordering: .releasing)
        let delta = max(deadline - monotonicNow(), 0)
        source.schedule(deadline: .now() + .nanoseconds(Int(delta)), leeway: .nanoseconds(0))
    }

    func disarm() {
        token.store(0, ordering: .releasing)
        source.schedule(deadline: .distantFuture)
    }

    func invalidate() {
        if invalidated.exchange(true, ordering: .acquiringAndReleasing) { return }
        token.store(0, ordering: .releasing)
        source.cancel()
    }
}
