import DeviceIO
import Reactive

/// How long to keep trying to open a node that udev has announced but whose permissions are
/// not there yet (EACCES/EPERM): exponential backoff, bounded by a total time budget.
public struct OpenRetryPolicy: Sendable, Hashable {
    /// The delay before the first retry.
    public var initialDelay: RxTimeInterval
    /// The factor applied to the delay after every retry.
    public var multiplier: Double
    /// The largest delay between two attempts.
    public var maxDelay: RxTimeInterval
    /// Give up when the next retry would start later than this after the first failure.
    public var giveUpAfter: RxTimeInterval

    /// Creates a policy; the defaults are 50 ms, ×2, at most 1 s apart, for about 10 s.
    public init(initialDelay: RxTimeInterval = .milliseconds(50), multiplier: Double = 2,
                maxDelay: RxTimeInterval = .seconds(1), giveUpAfter: RxTimeInterval = .seconds(10)) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.giveUpAfter = giveUpAfter
    }

    /// The delay schedule, as the core's backoff type.
    public var backoff: ExponentialBackoff {
        ExponentialBackoff(initial: initialDelay, multiplier: multiplier, maxDelay: maxDelay, maxAttempts: .max)
    }

    /// The delay before retry `n` (1-based), or nil when that retry would start more than
    /// `giveUpAfter` after the first failure (`elapsed` is the time since that failure).
    public func delay(beforeRetry n: Int, elapsed: RxTimeInterval) -> RxTimeInterval? {
        let d = backoff.delay(beforeRetry: n)
        return elapsed.nanoseconds + d.nanoseconds <= giveUpAfter.nanoseconds ? d : nil
    }

    /// Whether an open error is worth retrying: only permission errors, which udev fixes
    /// shortly after `add`; anything else (ENOENT, ENODEV, ENOTTY...) is final at once.
    public static func isRetryable(_ error: any Error) -> Bool {
        (error as? SystemError)?.isPermissionDenied ?? false
    }
}

/// The open-with-retry sequence: one element (the opened value) then completion, or an error
/// when the open keeps failing with EACCES/EPERM past the budget (the last open error) or
/// fails with anything else (that error, at once).
///
/// Built on the core's `retry(when:)`: each subscription tries `open()`; errors go to a
/// trigger that answers with a `timer` on `scheduler` while the policy allows another retry,
/// and with the error itself otherwise. Disposing during a wait cancels the timer; nothing is
/// opened after disposal.
public func openWithRetry<Opened>(
    policy: OpenRetryPolicy, scheduler: SchedulerType,
    onRetry: @escaping (_ attempt: Int, _ error: any Error) -> Void = { _, _ in },
    open: @escaping () throws -> Opened
) -> Observable<Opened> {
    Observable<Opened>.create { observer in
        do {
            observer.onNext(try open())
            observer.onCompleted()
        } catch {
            observer.onError(error)
        }
        return Disposables.create()
    }
    .retry(when: { (errors: Observable<any Error>) -> Observable<Int> in
        let state = RetryState()
        return errors.flatMap { error -> Observable<Int> in
            guard OpenRetryPolicy.isRetryable(error) else { return .error(error) }
            let now = scheduler.now
            if state.firstFailure == nil { state.firstFailure = now }
            state.retries += 1
            let elapsed = RxTimeInterval(nanoseconds: now - state.firstFailure!)
            guard let delay = policy.delay(beforeRetry: state.retries, elapsed: elapsed) else {
                return .error(error)
            }
            onRetry(state.retries, error)
            return Observable<Int>.timer(delay, scheduler: scheduler)
        }
    })
}

/// Per-subscription retry bookkeeping; touched only inside the trigger's serial delivery.
final class RetryState: @unchecked Sendable {
    var firstFailure: Int64?
    var retries = 0
}
