import Dispatch
#if canImport(Glibc)
import Glibc
#endif
@testable import InputDevices
import Reactive
import Testing

@Suite("readiness loop")
struct ReadinessLoopTests {
    /// Waits up to 5 s for `condition`, checking every millisecond.
    func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<5000 where !condition() { usleep(1000) }
        return condition()
    }

    @Test("a readable fd wakes its handler on the queue, again while data remains; nothing after unregister; fds released")
    func pipeReadiness() throws {
        let fdsBefore = try #require(openFileDescriptorCount())
        let scheduler = SerialDispatchQueueScheduler(label: "test.readiness")
        let key = DispatchSpecificKey<Int>()
        scheduler.queue.setSpecific(key: key, value: 7)
        var p: [Int32] = [0, 0]
        #expect(pipe(&p) == 0)
        _ = fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK)
        final class Seen: @unchecked Sendable {   // touched on the queue, read through queue.sync
            var calls = 0
            var bytes = 0
            var onQueue = true
        }
        let seen = Seen()
        func read<T>(_ f: (Seen) -> T) -> T { scheduler.queue.sync { f(seen) } }
        let loop = try ReadinessLoop(scheduler: scheduler)
        let token = loop.register(fd: p[0]) {
            seen.calls += 1
            if DispatchQueue.getSpecific(key: key) != 7 { seen.onQueue = false }
            var b: UInt8 = 0
            if Glibc.read(p[0], &b, 1) == 1 { seen.bytes += 1 }   // one byte per wake-up
            return .drained
        }
        var three: [UInt8] = [1, 2, 3]
        #expect(write(p[1], &three, 3) == 3)
        #expect(eventually { read { $0.bytes } == 3 })   // level-triggered: called until drained
        #expect(read { $0.onQueue })
        scheduler.queue.sync { loop.unregister(token) }
        let before = read { $0.calls }
        #expect(write(p[1], &three, 1) == 1)
        usleep(50_000)
        scheduler.queue.sync {}
        #expect(read { $0.calls } == before)
        loop.stop()
        close(p[0])
        close(p[1])
        #expect(eventually { openFileDescriptorCount() == fdsBefore })
    }

    @Test("a handler that leaves data queued in user space runs again without the fd becoming readable (libevdev's queue: no stall)")
    func morePendingRunsAgain() throws {
        let scheduler = SerialDispatchQueueScheduler(label: "test.readiness.pending")
        var p: [Int32] = [0, 0]
        #expect(pipe(&p) == 0)
        _ = fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK)
        // Like libevdev: the first wake-up reads everything the fd has into a user-space
        // queue, and each call hands out at most one item (the per-wake-up budget).
        final class Reader: @unchecked Sendable {   // touched on the queue
            var queued: [UInt8] = []
            var delivered: [UInt8] = []
        }
        let reader = Reader()
        let loop = try ReadinessLoop(scheduler: scheduler)
        let token = loop.register(fd: p[0]) {
            if reader.queued.isEmpty {
                var buffer = [UInt8](repeating: 0, count: 64)
                let n = Glibc.read(p[0], &buffer, buffer.count)
                if n > 0 { reader.queued += buffer[0..<n] }
            }
            guard !reader.queued.isEmpty else { return .drained }
            reader.delivered.append(reader.queued.removeFirst())
            return reader.queued.isEmpty ? .drained : .morePending
        }
        var five: [UInt8] = [1, 2, 3, 4, 5]
        #expect(write(p[1], &five, 5) == 5)
        // Nothing more is written: the fd is empty after the first read, so only `.morePending`
        // brings the other four out.
        #expect(eventually { scheduler.queue.sync { reader.delivered.count } == 5 })
        #expect(scheduler.queue.sync { reader.delivered } == [1, 2, 3, 4, 5])
        scheduler.queue.sync { loop.unregister(token) }
        loop.stop()
        close(p[0])
        close(p[1])
    }
}
