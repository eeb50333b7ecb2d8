#if canImport(Glibc)
import Glibc
#endif
import DeviceIO
import Testing
@testable import evflowd

/// SIGHUP's one path (issue #35: a sigaction flag and a dispatch signal source were two): the
/// handler counts into an eventfd that the input loop watches; SIGHUPs before the watch, or
/// while a reload runs, coalesce into one more reload.
@Suite("SIGHUP: one path, coalesced", .timeLimit(.minutes(1)))
struct HangupSignalTests {
    /// `raise(SIGHUP)` ×`times`, handled before it returns: the test runs on a Swift
    /// concurrency worker, a thread that blocks signals, so SIGHUP is unblocked around it.
    private func hangUp(times: Int) {
        var hup = sigset_t()
        var old = sigset_t()
        sigemptyset(&hup)
        sigaddset(&hup, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &hup, &old)
        for _ in 0..<times { raise(SIGHUP) }
        pthread_sigmask(SIG_SETMASK, &old, nil)
    }

    /// Runs the loop's queue twice: the first job's turn also runs the handlers of the fds
    /// ready by then (jobs, then fds, each turn), the second job runs after them.
    private func settle(_ loop: InputLoop) {
        loop.sync {}
        loop.sync {}
    }

    @Test("SIGHUPs before the reload service is up: the process lives, and they are one reload marked early; a later SIGHUP is one more, not early")
    func earlySignalsCoalesceIntoOneReload() async throws {
        let counter = try #require(HangupSignal.install())
        // Before the watch (start-up): SIGHUP's default action would end the test process.
        hangUp(times: 2)
        let loop = try InputLoop(name: "hup-test")
        defer { loop.shutdown() }
        var taken = counter.watch(on: loop).makeAsyncIterator()
        #expect(await taken.next() == SignalCounter.Taken(count: 2, beforeWatch: true))
        hangUp(times: 1)
        #expect(await taken.next() == SignalCounter.Taken(count: 1, beforeWatch: false))
    }

    @Test("SIGHUPs while a reload runs (the consumer busy): one more reload for all of them, not one per signal")
    func signalsDuringAReloadCoalesce() async throws {
        let counter = try SignalCounter()
        let loop = try InputLoop(name: "hup-test")
        defer { loop.shutdown() }
        var taken = counter.watch(on: loop).makeAsyncIterator()
        settle(loop)
        counter.add()
        #expect(await taken.next() == SignalCounter.Taken(count: 1, beforeWatch: false))
        // Busy: two signals, each seen by the loop on its own turn, none consumed yet.
        counter.add()
        settle(loop)
        counter.add()
        settle(loop)
        #expect(await taken.next() == SignalCounter.Taken(count: 1, beforeWatch: false))
        // Nothing else was left queued: the next element is this batch of three, taken at once
        // (added on the loop thread, so the loop cannot take them between two adds).
        loop.sync {
            counter.add()
            counter.add()
            counter.add()
        }
        settle(loop)
        #expect(await taken.next() == SignalCounter.Taken(count: 3, beforeWatch: false))
    }

    @Test("the watch ends with its stream: the eventfd leaves the loop, and a later signal stays counted for the next watch")
    func endedWatchUnregisters() async throws {
        let counter = try SignalCounter()
        let loop = try InputLoop(name: "hup-test")
        defer { loop.shutdown() }
        let before = loop.sync { loop.registrationCount }
        do {
            var taken = counter.watch(on: loop).makeAsyncIterator()
            settle(loop)
            #expect(loop.sync { loop.registrationCount } == before + 1)
            counter.add()
            #expect(await taken.next() == SignalCounter.Taken(count: 1, beforeWatch: false))
        }
        settle(loop)
        #expect(loop.sync { loop.registrationCount } == before)
        counter.add()
        settle(loop)
        #expect(counter.take() == 1)
    }
}
