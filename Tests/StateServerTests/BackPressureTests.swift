import DeviceStreams
import Dispatch
import Foundation
import InputModel
import Pipeline
import Reactive
import Synchronization
import Testing
@testable import StateServer
#if canImport(Glibc)
import Glibc
#endif

/// What one client can make the server hold (issue #25, finding 3: a client pipelining
/// `LATENCY` grew the daemon ~20 MB/s, its lines piling up behind the pending answer).
@Suite(.serialized, .ownLiveResources) struct BackPressureTests {
    /// A hub on a serial queue the test can hold, so a `LATENCY` answer stays pending.
    final class HeldHub: @unchecked Sendable {
        let queue = DispatchQueue(label: "back-pressure-hub")
        let hub: DeviceHub
        private let devices = PublishSubject<DeviceStream>()
        private let running: Disposable
        private let gate = DispatchSemaphore(value: 0)

        init() {
            hub = DeviceHub(store: StateStore(), config: FilterConfig(),
                            scheduler: SerialDispatchQueueScheduler(serialQueue: queue), latencyClock: .monotonic)
            running = hub.run(devices.asObservable())
        }

        /// Blocks the hub's thread until `release()`.
        func hold() { queue.async { [gate] in gate.wait() } }
        func release() { gate.signal() }

        func stop() {
            running.dispose()
            queue.sync {}
        }
    }

    /// Sends `line` over and over without blocking until the server stops taking bytes
    /// (nothing more fits for `stall` seconds) or `cap` bytes are sent; returns the bytes sent.
    /// Ends on a line boundary (blocking for the rest of a line the kernel took only part of).
    static func flood(_ client: TestClient, line: String, cap: Int, stall: Double = 0.5) throws -> Int {
        let chunk = Array(String(repeating: line + "\n", count: 256).utf8)
        let flags = fcntl(client.fd, F_GETFL)
        _ = fcntl(client.fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(client.fd, F_SETFL, flags) }
        var sent = 0
        while sent < cap {
            let offset = sent % chunk.count
            let n = chunk[offset...].withUnsafeBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            guard n < 0, errno == EAGAIN || errno == EINTR else { throw TestClientError(description: "send: \(errno)") }
            var p = pollfd(fd: client.fd, events: Int16(POLLOUT), revents: 0)
            if poll(&p, 1, Int32(stall * 1000)) == 0 { break }   // stalled: the server takes nothing
        }
        let lineBytes = Array((line + "\n").utf8)
        let partial = sent % lineBytes.count
        if partial > 0 {
            _ = fcntl(client.fd, F_SETFL, flags)
            try client.sendRaw(Array(lineBytes[partial...]))
            sent += lineBytes.count - partial
        }
        return sent
    }

    @Test func linesPipelinedBehindAPendingLatencyAnswerWaitInTheKernelNotInTheServer() async throws {
        let held = HeldHub()
        let (server, path) = try await startServer(hub: held.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            held.hold()
            try c.send(#"{"class":"LATENCY","id":"first"}"#)
            let ping = #"{"class":"PING"}"#
            let sent = try Self.flood(c, line: ping, cap: 64 << 20)
            // Before: the server read everything into its framer (64 MB here, and growing
            // for as long as the client sent). Now it stops reading: what was sent is what
            // the kernel's socket buffers hold plus at most one read cycle.
            #expect(sent < 4 << 20, "the server took \(sent) bytes while an answer was pending")
            held.release()
            #expect(try c.read(timeout: 10)["id"] as? String == "first")
            let pings = sent / (ping.utf8.count + 1)
            for i in 0..<pings {
                let m = try c.read(timeout: 10)
                guard m["class"] as? String == "PING" else {
                    Issue.record("reply \(i) of \(pings): \(m)")
                    break
                }
            }
            #expect(server.droppedClients == 0)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        held.stop()
    }

    @Test func aClientThatPipelinesFasterThanItReadsIsPacedNotDropped() async throws {
        let devices = ManualDevices()
        for i in 0..<8 { devices.add(testKeyboard("Keyboard \(i)", product: UInt16(i + 1))) }
        let (server, path) = try await startServer(hub: devices.hub) { $0.outgoingBufferLimit = 32 * 1024 }
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            // 2,000 DEVICES replies (over 1 MB) asked for before reading any: before, the
            // replies filled the 32 KiB outbox and the client was dropped as a slow
            // consumer; now its requests wait until it reads.
            let count = 2_000
            let sender = Thread {
                try? c.sendRaw(Array(String(repeating: #"{"class":"DEVICES"}"# + "\n", count: count).utf8))
            }
            sender.start()
            // Real time is the point: the client reads nothing for a while, so the replies pile
            // up against the limit (nothing outside the connection marks "the server has
            // stopped reading"); a drop at any time would also end the read loop below.
            try await Task.sleep(for: .milliseconds(500))
            #expect(server.droppedClients == 0)
            for i in 0..<count {
                let m = try c.read(timeout: 10)
                guard m["class"] as? String == "DEVICES" else {
                    Issue.record("reply \(i) of \(count): \(m)")
                    break
                }
            }
            #expect(server.droppedClients == 0)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    /// docs/protocol.md's EOF rule, a half-closed watcher included: the lines received before
    /// the EOF are answered, then the connection closes and the watch with it.
    @Test func aClientThatShutsItsWritingSideGetsItsAnswersThenEOFEvenWhenWatching() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        devices.add(kb)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            try c.send(#"{"class":"PING","id":1}"# + "\n" + #"{"class":"WATCH","id":2}"#)
            shutdown(c.fd, Int32(SHUT_WR))
            let lines = try c.drainToEOF(timeout: 10)
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.first?.contains(#""class":"PING""#) == true)
            #expect(lines.last?.contains(#""class":"WATCH""#) == true)
        }
        #expect(await eventually { server.clientCount == 0 && server.frameEncoders.isEmpty })
        await server.shutdown()
        devices.stop()
    }
}
