import Reactive
import ReactiveTesting
import Testing

/// VirtualTimeScheduler: ordering, advance, timers and their stale entries.
@Suite("VirtualTimeScheduler", .ownLiveResources)
struct VirtualTimeSchedulerTests {
    @Test("work runs by due time, then by order of scheduling")
    func ordering() {
        let scheduler = VirtualTimeScheduler()
        var log: [String] = []
        scheduler.schedule(after: .nanoseconds(20)) { log.append("b20") }
        scheduler.schedule(after: .nanoseconds(10)) { log.append("a10") }
        scheduler.schedule(after: .nanoseconds(20)) { log.append("c20") }
        scheduler.schedule { log.append("now1") }
        scheduler.schedule { log.append("now2") }
        scheduler.scheduleAbsolute(10) { log.append("d10") }
        scheduler.run()
        #expect(log == ["now1", "now2", "a10", "d10", "b20", "c20"])
        #expect(scheduler.now == 20)
    }

    @Test("work scheduled while running for the current time runs after work already due")
    func scheduleWhileRunning() {
        let scheduler = VirtualTimeScheduler()
        var log: [String] = []
        scheduler.scheduleAbsolute(5) {
            log.append("first")
            scheduler.schedule { log.append("nested") }
        }
        scheduler.scheduleAbsolute(5) { log.append("second") }
        scheduler.run()
        #expect(log == ["first", "second", "nested"])
    }

    @Test("advance(to:) runs everything due up to and including the time, then sets the clock")
    func advanceTo() {
        let scheduler = VirtualTimeScheduler(initialClock: 100)
        var log: [Int64] = []
        for t in [110, 120, 130] as [Int64] { scheduler.scheduleAbsolute(t) { log.append(scheduler.now) } }
        scheduler.advance(to: 120)
        #expect(log == [110, 120])
        #expect(scheduler.now == 120)
        scheduler.advance(to: 125)
        #expect(scheduler.now == 125)
        #expect(scheduler.hasPendingWork)
        scheduler.advance(by: .nanoseconds(5))
        #expect(log == [110, 120, 130])
        #expect(!scheduler.hasPendingWork)
        // A time in the past does not move the clock back.
        scheduler.scheduleAbsolute(50) { log.append(scheduler.now) }
        scheduler.advance(to: 130)
        #expect(log.last == 130)
    }

    @Test("a disposed action does not run")
    func disposedAction() {
        let scheduler = VirtualTimeScheduler()
        var ran = false
        let d = scheduler.schedule(after: .nanoseconds(10)) { ran = true }
        d.dispose()
        scheduler.run()
        #expect(!ran)
    }

    @Test("timer: arm fires once with the arm's token; re-arm replaces; disarm cancels")
    func timerRearmDisarm() {
        let scheduler = VirtualTimeScheduler()
        var fired: [(UInt64, Int64)] = []
        let timer = scheduler.makeTimer { fired.append(($0, scheduler.now)) }
        timer.arm(at: 10, token: 1)
        timer.arm(at: 20, token: 2)        // replaces: the entry for 10 is stale
        scheduler.advance(to: 15)
        #expect(fired.isEmpty)
        scheduler.advance(to: 30)
        #expect(fired.map(\.0) == [2])
        #expect(fired.map(\.1) == [20])

        timer.arm(at: 40, token: 3)
        timer.disarm()
        scheduler.advance(to: 50)
        #expect(fired.count == 1)

        // Re-arm to an earlier time than a pending one: the earlier wins, the later is stale.
        timer.arm(at: 80, token: 4)
        timer.arm(at: 60, token: 5)
        scheduler.run()
        #expect(fired.map(\.0) == [2, 5])
        #expect(fired.last?.1 == 60)

        // A deadline in the past fires at the current time.
        timer.arm(at: 0, token: 6)
        scheduler.run()
        #expect(fired.last?.0 == 6)
        #expect(fired.last?.1 == 80)
        timer.invalidate()
    }

    @Test("an invalidated timer never fires and is released at once, before its stale entries come due")
    func invalidateReleases() {
        let scheduler = VirtualTimeScheduler()
        var fired = 0
        do {
            let timer = scheduler.makeTimer { _ in fired += 1 }
            timer.arm(at: 1_000, token: 1)
            LiveResources.expectOwned(1)
            timer.invalidate()
            timer.arm(at: 2_000, token: 2)      // arming after invalidate does nothing
        }
        // The heap still holds the stale entry for 1000, but the timer is gone.
        LiveResources.expectOwned(0)
        #expect(scheduler.hasPendingWork)
        scheduler.run()
        #expect(fired == 0)
    }

    @Test("a reused slot does not fire for the previous timer's stale entries")
    func slotReuse() {
        let scheduler = VirtualTimeScheduler()
        var log: [String] = []
        let first = scheduler.makeTimer { _ in log.append("first") }
        first.arm(at: 10, token: 1)
        first.invalidate()
        let second = scheduler.makeTimer { _ in log.append("second") }   // same slot
        second.arm(at: 20, token: 1)
        scheduler.run()
        #expect(log == ["second"])
        second.invalidate()
    }

    @Test("a timer re-armed from its own handler fires again")
    func rearmFromHandler() {
        let scheduler = VirtualTimeScheduler()
        var times: [Int64] = []
        var timer: SchedulerTimer?
        timer = scheduler.makeTimer { token in
            times.append(scheduler.now)
            if token < 3 { timer?.arm(at: scheduler.now + 10, token: token + 1) }
        }
        timer?.arm(at: 10, token: 1)
        scheduler.run()
        #expect(times == [10, 20, 30])
        timer?.invalidate()
    }

    @Test("TestScheduler ticks are milliseconds")
    func ticks() {
        let scheduler = TestScheduler()
        var at: Int64 = 0
        scheduler.scheduleAt(5) { at = scheduler.now }
        scheduler.start()
        #expect(at == 5_000_000)
        #expect(scheduler.clockTicks == 5)
    }
}
