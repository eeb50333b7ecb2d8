import DeviceStreams
import EvflowProtocol
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

    /// Issue #34, bug 8: a reply larger than the outgoing-buffer limit (256 KiB) was refused
    /// by the outbox and its client dropped as a slow consumer, so `DEVICES`, `METRICS` and
    /// `LATENCY` with 1,500 devices never arrived (evflowctl exit 69; evflow-mqtt reconnected
    /// every 0.5 s for ever). Each is delivered now, whole, to a client that reads slowly and
    /// watches meanwhile: the frames streamed while a reply waits are not counted with it.
    /// (`METRICS` with 1,500 devices takes 116 s in a debug build, so it is tested with 40
    /// devices below.)
    @Test func repliesLargerThanTheOutgoingBufferReachAClientThatReadsSlowly() async throws {
        let queue = DispatchQueue(label: "large-replies-hub")
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(),
                            scheduler: SerialDispatchQueueScheduler(serialQueue: queue), latencyClock: .monotonic)
        let source = PublishSubject<DeviceStream>()
        let running = hub.run(source.asObservable())
        let pad = String(repeating: "k", count: 200)
        let keyboards = (0..<1_500).map { testKeyboard("Keyboard \($0) \(pad)", product: UInt16($0 + 1)) }
        let mouse = testMouse()
        let motion = PublishSubject<InputFrame>()
        let silent = PublishSubject<InputFrame>()
        queue.sync {
            for info in keyboards { source.onNext(DeviceStream(info: info, frames: silent.asObservable())) }
            source.onNext(DeviceStream(info: mouse, frames: motion.asObservable()))
        }
        #expect(await eventually { hub.devices.count == 1_501 })
        let (server, path) = try await startServer(hub: hub)
        let limit = ProtocolConstants.defaultOutgoingBufferLimit
        do {
            let c = try TestClient(path: path, receiveBuffer: 4096)
            _ = try c.read()
            _ = try c.request(#"{"class":"WATCH","devices":["\#(mouse.id.rawValue)"]}"#)
            try c.send(#"{"class":"DEVICES"}"# + "\n" + #"{"class":"LATENCY"}"#)
            // The client reads nothing while frames are streamed behind the first reply.
            try await Task.sleep(for: .milliseconds(200))
            let t0 = monotonicNow()
            queue.sync {
                for i in 0..<20 { motion.onNext(motionFrame(dx: 1, ms: t0 / 1_000_000 + Int64(i))) }
            }
            try await server.roundTrip()
            #expect(server.droppedClients == 0)
            var lengths: [String: Int] = [:]
            var devices = 0
            var frames = 0
            while lengths.count < 2 || frames < 20 {
                // Slowly: 4 KiB of receive buffer, a pause per line.
                let read: String?
                do {
                    read = try c.readLine(timeout: 30)
                } catch {
                    Issue.record("\(error) after \(lengths) and \(frames) frames")
                    break
                }
                guard let line = read else {
                    Issue.record("EOF after \(lengths.keys.sorted()) and \(frames) frames")
                    break
                }
                let m = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let cls = m["class"] as? String ?? "?"
                if cls == "CLOSE" { Issue.record("closed: \(line)"); break }
                if cls == "FRAME" { frames += 1 } else { lengths[cls] = line.utf8.count }
                if cls == "DEVICES" { devices = (m["devices"] as? [Any])?.count ?? 0 }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect((lengths["DEVICES"] ?? 0) > limit, "DEVICES: \(lengths["DEVICES"] ?? 0) bytes")
            #expect(lengths["LATENCY"] != nil)
            #expect(devices == 1_501)
            #expect(frames == 20)
            #expect(server.droppedClients == 0)
            c.close()
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        running.dispose()
        queue.sync {}
    }

    /// Issue #34, bug 8, `METRICS`: 40 devices named with 255 bytes that are written escaped
    /// (ESC as `\x1b`) make an exposition over 256 KiB; the client got `CLOSE slow-consumer`.
    @Test func aMetricsReplyLargerThanTheOutgoingBufferIsDelivered() async throws {
        let queue = DispatchQueue(label: "large-metrics-hub")
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(),
                            scheduler: SerialDispatchQueueScheduler(serialQueue: queue), latencyClock: .monotonic)
        let source = PublishSubject<DeviceStream>()
        let running = hub.run(source.asObservable())
        let silent = PublishSubject<InputFrame>()
        queue.sync {
            for i in 0..<40 {
                let name = "\(i) " + String(repeating: "\u{1B}", count: 252)
                source.onNext(DeviceStream(info: testKeyboard(name, product: UInt16(i + 1)), frames: silent.asObservable()))
            }
        }
        #expect(await eventually { hub.devices.count == 40 })
        let (server, path) = try await startServer(hub: hub)
        do {
            let c = try TestClient(path: path, receiveBuffer: 4096)
            _ = try c.read()
            try c.send(#"{"class":"METRICS"}"#)
            try await Task.sleep(for: .milliseconds(200))   // reads nothing for a while
            let line = try #require(try c.readLine(timeout: 30))
            #expect(line.hasPrefix(#"{"class":"METRICS""#), "\(line.prefix(200))")
            #expect(line.utf8.count > ProtocolConstants.defaultOutgoingBufferLimit, "\(line.utf8.count) bytes")
            #expect(server.droppedClients == 0)
            c.close()
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        running.dispose()
        queue.sync {}
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
