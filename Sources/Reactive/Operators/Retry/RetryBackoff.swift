/// An exponential backoff schedule for `retry(backoff:scheduler:)`.
///
/// The delay before retry `n` (n = 1 for the first retry) is
/// `min(initial × multiplierⁿ⁻¹, maxDelay)`. `maxAttempts` counts every subscription,
/// the first included (as `retry(_:)`): after the `maxAttempts`-th failure the error is
/// passed on.
public struct ExponentialBackoff: Sendable, Hashable {
    /// The delay before the first retry.
    public var initial: RxTimeInterval
    /// The factor applied to the delay after every retry (≥ 1 grows).
    public var multiplier: Double
    /// The largest delay.
    public var maxDelay: RxTimeInterval
    /// Attempts in all, the first included; `Int.max` retries forever.
    public var maxAttempts: Int

    /// Creates a schedule.
    public init(initial: RxTimeInterval, multiplier: Double = 2, maxDelay: RxTimeInterval, maxAttempts: Int) {
        self.initial = initial
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
    }

    /// The delay before retry `n` (1-based), capped at `maxDelay`.
    public func delay(beforeRetry n: Int) -> RxTimeInterval {
        let factor = backoffPower(multiplier, Double(max(n - 1, 0)))
        let ns = Double(initial.nanoseconds) * factor
        if !ns.isFinite || ns >= Double(maxDelay.nanoseconds) { return maxDelay }
        return RxTimeInterval(nanoseconds: Int64(ns.rounded()))
    }
}

/// `pow` without importing Foundation: repeated multiplication is exact for the small
/// integer exponents a backoff uses and stays deterministic across platforms.
@usableFromInline
func backoffPower(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var n = Int(exponent)
    while n > 0 {
        result *= base
        if !result.isFinite { return result }
        n -= 1
    }
    return result
}

extension ObservableType {
    /// Retries after errors with an exponential backoff: waits `backoff.delay(beforeRetry: n)`
    /// on `scheduler` before retry `n`; after `backoff.maxAttempts` failed attempts in all,
    /// passes the last error on.
    ///
    /// Built from `retry(when:)`: the trigger is `errors.flatMap { timer(delay) }` with a
    /// per-subscription attempt counter, so each subscription starts its schedule afresh.
    /// Disposal during a wait cancels the timer. Completion: when an attempt completes.
    public func retry(backoff: ExponentialBackoff, scheduler: SchedulerType) -> Observable<Element> {
        retry(when: { (errors: Observable<any Error>) -> Observable<Int> in
            let failures = BackoffCounter()
            return errors.flatMap { error -> Observable<Int> in
                failures.value += 1
                guard failures.value < backoff.maxAttempts else { return .error(error) }
                return Observable<Int>.timer(backoff.delay(beforeRetry: failures.value), scheduler: scheduler)
            }
        })
    }
}

/// Failures so far of one subscription; touched only inside the trigger's serial delivery.
final class BackoffCounter: @unchecked Sendable {
    var value = 0
}
