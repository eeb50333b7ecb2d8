import Dispatch
#if canImport(Glibc)
import Glibc
#endif
@testable import DeviceIO
@testable import InputDevices
import Reactive
import Synchronization
import ReactiveTesting
import Testing

/// Waits up to 5 s for `condition`, checking every millisecond.
private func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<5000 where !condition() { usleep(1000) }
    return condition()
}

/// A non-blocking pipe, closed by `close()`.
private struct Pipe {
    let read: Int32
    let write: Int32
    init() {
        var p: [Int32] = [0, 0]
        precondition(pipe(&p) == 0)
        _ = fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK)
        read = p[0]
        write = p[1]
    }
    func send(_ bytes: [UInt8]) {
        var b = bytes
        precondition(Glibc.write(write, &b, b.count) == b.count)
    }
    func close() {
        Glibc.close(read)
        Glibc.close(write)
    }
}

/// State touched only on the loop thread; tests read it through `loop.sync`.
private final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

// "Nothing was called" is checked after a marker has gone through the loop the same way,
// never after a fixed sleep (which under load can end before the loop has even woken up).

/// Makes a marker fd readable and waits until its handler has run and the loop has finished
/// that turn: every fd readable before the marker was written was in that epoll batch or an
/// earlier one, so whatever its handler would do has been done. Whether the marker ran.
private func markerTurn(_ loop: InputLoop) -> Bool {
    let marker = Pipe()
    defer { marker.close() }
    let ran = Box(false)
    let token = loop.sync {
        loop.register(fd: marker.read) {
            var b: UInt8 = 0
            _ = Glibc.read(marker.read, &b, 1)
            ran.value = true
            return .drained
        }
    }
    marker.send([0])
    let done = eventually { loop.sync { ran.value } }   // `sync` runs after the marker's turn
    loop.sync { loop.unregister(token, fd: marker.read) }
    return done
}

/// Waits until a marker timer due at `deadline` has fired on `loop`: timers fire in deadline
/// order (the heap test below), so every timer due before it has had its turn. Whether it fired.
private func passed(_ loop: InputLoop, _ deadline: Int64) -> Bool {
    let fired = Box(false)
    let marker = loop.makeTimer { _ in fired.value = true }
    defer { marker.invalidate() }
    marker.arm(at: deadline, token: 1)
    return eventually { loop.sync { fired.value } }
}

@Suite("input loop: fds", .ownLiveResources)
struct InputLoopFDTests {
    @Test("a readable fd runs its handler on the loop thread, again while data remains; never after unregister; shutdown ends the thread and closes its fds")
    func pipeReadiness() throws {
        let loop = try InputLoop(name: "test.fd")
        let p = Pipe()
        let calls = Box(0), bytes = Box(0), onLoop = Box(true)
        let token = loop.sync {
            loop.register(fd: p.read) {
                calls.value += 1
                if !loop.isCurrent { onLoop.value = false }
                var b: UInt8 = 0
                if Glibc.read(p.read, &b, 1) == 1 { bytes.value += 1 }   // one byte per call
                return .drained
            }
        }
        p.send([1, 2, 3])
        #expect(eventually { loop.sync { bytes.value } == 3 })   // level-triggered: until drained
        #expect(loop.sync { onLoop.value })
        loop.sync { loop.unregister(token, fd: p.read) }
        let before = loop.sync { calls.value }
        p.send([4])
        #expect(markerTurn(loop))
        #expect(loop.sync { calls.value } == before)
        #expect(loop.sync { loop.registrationCount } == 0)
        loop.shutdown()
        #expect(eventually { loop.hasFinished })
        p.close()
    }

    @Test("an fd watched for writing runs its handler while it is writable; updated to readable only, it is not called again until it is readable (sd-bus's output queue)")
    func writableInterest() throws {
        let loop = try InputLoop(name: "test.write")
        let p = Pipe()
        let calls = Box(0), token = Box<InputLoop.Token?>(nil)
        // The write end of an empty pipe is always writable and never readable.
        // Set on the loop, before the handler can run.
        loop.sync {
            token.value = loop.register(fd: p.write, interest: [.readable, .writable]) {
                calls.value += 1
                if calls.value == 3, let t = token.value { loop.update(t, fd: p.write, interest: .readable) }
                return .drained
            }
        }
        #expect(eventually { loop.sync { calls.value } >= 3 })
        #expect(markerTurn(loop))
        #expect(loop.sync { calls.value } == 3, "called again after the update to readable only")
        loop.sync { loop.update(token.value!, fd: p.write, interest: .writable) }
        #expect(eventually { loop.sync { calls.value } > 3 })
        loop.sync { loop.unregister(token.value!, fd: p.write) }
        loop.shutdown()
        #expect(eventually { loop.hasFinished })
        p.close()
    }

    @Test("a handler that leaves data queued in user space runs again without the fd becoming readable (libevdev's queue: no stall)")
    func morePendingRunsAgain() throws {
        let loop = try InputLoop(name: "test.pending")
        defer { loop.shutdown() }
        let p = Pipe()
        defer { p.close() }
        // Like libevdev: the first call reads everything the fd has into a user-space queue,
        // and each call hands out at most one item (the per-wake-up budget).
        let queued = Box<[UInt8]>([]), delivered = Box<[UInt8]>([])
        let token = loop.sync {
            loop.register(fd: p.read) {
                if queued.value.isEmpty {
                    var buffer = [UInt8](repeating: 0, count: 64)
                    let n = Glibc.read(p.read, &buffer, buffer.count)
                    if n > 0 { queued.value += buffer[0..<n] }
                }
                guard !queued.value.isEmpty else { return .drained }
                delivered.value.append(queued.value.removeFirst())
                return queued.value.isEmpty ? .drained : .morePending
            }
        }
        p.send([1, 2, 3, 4, 5])
        // Nothing more is written: the fd is empty after the first read, so only `.morePending`
        // brings the other four out.
        #expect(eventually { loop.sync { delivered.value.count } == 5 })
        #expect(loop.sync { delivered.value } == [1, 2, 3, 4, 5])
        loop.sync { loop.unregister(token, fd: p.read) }
    }

    @Test("a registration removed by another handler in the same turn is not called (its fd may already be closed and reused)")
    func unregisteredInTheSameTurn() throws {
        let loop = try InputLoop(name: "test.sameturn")
        defer { loop.shutdown() }
        let a = Pipe(), b = Pipe()
        defer { a.close(); b.close() }
        let called = Box<[String]>([])
        // Both fds are readable before the loop waits, so both are in one epoll batch; the
        // first handler to run unregisters the other.
        loop.sync {
            a.send([1])
            b.send([1])
            let tokens = Box<[Int32: InputLoop.Token]>([:])
            func unregisterBoth() {
                for (fd, token) in tokens.value { loop.unregister(token, fd: fd) }
            }
            tokens.value[a.read] = loop.register(fd: a.read) {
                called.value.append("a")
                unregisterBoth()
                return .drained
            }
            tokens.value[b.read] = loop.register(fd: b.read) {
                called.value.append("b")
                unregisterBoth()
                return .drained
            }
        }
        #expect(markerTurn(loop))
        #expect(loop.sync { called.value.count } == 1)
        #expect(loop.sync { loop.registrationCount } == 0)
    }
}

@Suite("input loop: jobs", .ownLiveResources)
struct InputLoopJobTests {
    @Test("jobs from other threads run once each, on the loop, in each thread's order; a disposed job does not run")
    func jobsFromManyThreads() throws {
        let loop = try InputLoop(name: "test.jobs")
        defer { loop.shutdown() }
        let perThread = 20_000, threads = 4
        let seen = Box<[[Int]]>(Array(repeating: [], count: threads))
        let offLoop = Box(0)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                loop.schedule {
                    if !loop.isCurrent { offLoop.value += 1 }
                    seen.value[t].append(i)
                }
            }
        }
        let cancelled = Box(false)
        loop.schedule { cancelled.value = true }.dispose()
        let result = loop.sync { seen.value }
        for t in 0..<threads { #expect(result[t] == Array(0..<perThread)) }
        #expect(loop.sync { offLoop.value } == 0)
        #expect(loop.sync { cancelled.value } == false)
    }

    /// Issue #34: a sensor replay at --speed 1 of a recording spanning 10¹⁰ s asked for a step
    /// that far away, and `monotonicNow() + dueTime` trapped.
    @Test("a timer due beyond the clock's range (Int64.max ns) is armed as never, not a trap; a near one still runs")
    func aTimerBeyondTheClocksRangeIsNever() throws {
        let loop = try InputLoop(name: "test.far")
        defer { loop.shutdown() }
        let far = Box(false)
        let farTimer = loop.schedule(after: RxTimeInterval(nanoseconds: .max)) { far.value = true }
        let near = DispatchSemaphore(value: 0)
        _ = loop.schedule(after: .milliseconds(1)) { near.signal() }
        near.wait()
        #expect(loop.sync { far.value } == false)
        farTimer.dispose()
    }

    @Test("a job scheduled from the loop runs after the jobs already queued, and after the fds of that turn")
    func jobsFromTheLoop() throws {
        let loop = try InputLoop(name: "test.jobs2")
        defer { loop.shutdown() }
        let order = Box<[String]>([])
        loop.sync {
            loop.schedule { order.value.append("second") }
            loop.schedule {
                order.value.append("third")
                loop.schedule { order.value.append("fifth") }
            }
            loop.schedule { order.value.append("fourth") }
            order.value.append("first")
        }
        #expect(eventually { loop.sync { order.value.count } == 5 })
        #expect(loop.sync { order.value } == ["first", "second", "third", "fourth", "fifth"])
    }
}

@Suite("input loop: timers", .ownLiveResources)
struct InputLoopTimerTests {
    @Test("schedule(after:) runs on the loop no earlier than its delay; a disposed one never runs")
    func scheduleAfter() throws {
        let loop = try InputLoop(name: "test.after")
        defer { loop.shutdown() }
        let start = loop.now
        let ranAt = Box<Int64?>(nil), cancelledRan = Box(false)
        loop.schedule(after: .milliseconds(30)) { ranAt.value = loop.now }
        let cancel = loop.schedule(after: .milliseconds(10)) { cancelledRan.value = true }
        cancel.dispose()
        #expect(eventually { loop.sync { ranAt.value } != nil })
        let elapsed = try #require(loop.sync { ranAt.value }) - start
        #expect(elapsed >= 30_000_000)
        // The job due at 30 ms came after the cancelled one's 10 ms on the same heap.
        #expect(loop.sync { cancelledRan.value } == false)
    }

    @Test("a timer fires once per arm with that arm's token; re-arming later postpones it, earlier advances it; disarm cancels")
    func rearm() throws {
        let loop = try InputLoop(name: "test.rearm")
        defer { loop.shutdown() }
        let fired = Box<[(token: UInt64, at: Int64)]>([])
        let timer = loop.makeTimer { token in fired.value.append((token, loop.now)) }
        defer { timer.invalidate() }
        let t0 = loop.sync { () -> Int64 in
            let t0 = loop.now
            timer.arm(at: t0 + 20_000_000, token: 1)
            timer.arm(at: t0 + 60_000_000, token: 2)   // later: postponed
            return t0
        }
        #expect(eventually { loop.sync { fired.value.count } == 1 })
        let first = try #require(loop.sync { fired.value.first })
        #expect(first.token == 2 && first.at - t0 >= 60_000_000)
        let t1 = loop.sync { () -> Int64 in
            let t1 = loop.now
            timer.arm(at: t1 + 200_000_000, token: 3)
            timer.arm(at: t1 + 10_000_000, token: 4)   // earlier: advanced
            return t1
        }
        #expect(eventually { loop.sync { fired.value.count } == 2 })
        let second = try #require(loop.sync { fired.value.last })
        #expect(second.token == 4 && second.at - t1 < 200_000_000)
        let disarmed = loop.sync { () -> Int64 in
            timer.arm(at: loop.now + 10_000_000, token: 5)
            timer.disarm()
            return loop.now + 10_000_000
        }
        #expect(passed(loop, max(disarmed, t1 + 200_000_000) + 20_000_000))
        #expect(loop.sync { fired.value.count } == 2)   // nothing from 3 (replaced) or 5 (disarmed)
    }

    @Test("many timers armed, re-armed and disarmed at random fire in deadline order, each at most once per arm (the heap against a model)")
    func heapOrder() throws {
        let loop = try InputLoop(name: "test.heap")
        defer { loop.shutdown() }
        let fired = Box<[Int]>([])
        var generator = SystemRandomNumberGenerator()
        let count = 200
        let timers = (0..<count).map { i in loop.makeTimer { _ in fired.value.append(i) } }
        defer { for t in timers { t.invalidate() } }
        // Model: timer -> deadline (nil: disarmed), all relative to one base 50 ms ahead.
        let expected = loop.sync { () -> [Int] in
            let base = loop.now + 50_000_000
            var model: [Int: Int64] = [:]
            for _ in 0..<2_000 {
                let i = Int.random(in: 0..<count, using: &generator)
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    timers[i].disarm()
                    model[i] = nil
                } else {
                    // Distinct deadlines (µs apart) so the order is defined.
                    let d = base + Int64(i) * 1_000 + Int64.random(in: 0..<200, using: &generator) * 200_000
                    timers[i].arm(at: d, token: 1)
                    model[i] = d
                }
            }
            return model.sorted { $0.value < $1.value }.map(\.key)
        }
        #expect(eventually { loop.sync { fired.value.count } >= expected.count })
        #expect(passed(loop, loop.now + 20_000_000))   // a timer firing twice would be in by then
        #expect(loop.sync { fired.value } == expected)
    }

    @Test("arming from another thread lands on the loop; invalidate releases the handler")
    func offLoopArmAndInvalidate() throws {
        let loop = try InputLoop(name: "test.offloop")
        defer { loop.shutdown() }
        final class Token: Sendable {}
        weak var captured: Token?
        let fired = Box(0)
        let timer: SchedulerTimer = {
            let token = Token()
            captured = token
            return loop.makeTimer { _ in withExtendedLifetime(token) { fired.value += 1 } }
        }()
        timer.arm(at: loop.now + 5_000_000, token: 9)   // from the test's thread
        #expect(eventually { loop.sync { fired.value } == 1 })
        #expect(captured != nil)
        timer.invalidate()
        loop.sync {}
        #expect(captured == nil)
        timer.arm(at: loop.now, token: 10)   // after invalidate: ignored
        #expect(passed(loop, loop.now + 20_000_000))
        #expect(loop.sync { fired.value } == 1)
    }
}
