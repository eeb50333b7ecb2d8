import Reactive
import Testing

@Suite("RxTimeInterval") struct TimeIntervalTests {
    /// Issue #25 finding 2: `evflowd --idle-timeout 10000000000` trapped converting the
    /// timeout to nanoseconds when a client connected (ClientConnection.armIdleTimer).
    @Test("a Duration converts to nanoseconds, saturating instead of trapping")
    func clampingDuration() {
        #expect(RxTimeInterval(clamping: .seconds(300)).nanoseconds == 300_000_000_000)
        #expect(RxTimeInterval(clamping: .milliseconds(1500)).nanoseconds == 1_500_000_000)
        #expect(RxTimeInterval(clamping: .nanoseconds(7)).nanoseconds == 7)
        #expect(RxTimeInterval(clamping: .zero).nanoseconds == 0)
        #expect(RxTimeInterval(clamping: .seconds(10_000_000_000)).nanoseconds == .max)
        #expect(RxTimeInterval(clamping: .seconds(Int64.max)).nanoseconds == .max)
        #expect(RxTimeInterval(clamping: .seconds(9_223_372_036) + .nanoseconds(999_999_999)).nanoseconds == .max)
        #expect(RxTimeInterval(clamping: .seconds(-10_000_000_000)).nanoseconds == .min)
    }
}
