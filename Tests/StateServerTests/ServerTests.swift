import Foundation
import InputModel
import Pipeline
import Reactive
import Recording
import Synchronization
import ReactiveTesting
import Testing
@testable import EvflowProtocol
@testable import StateServer
#if canImport(Glibc)
import Glibc
#endif

// The socket server end to end: a real server on a temporary socket, a DeviceHub fed by
// fixtures or by the test, and plain POSIX clients. After every test, `.ownLiveResources`
// checks that the live-resource counter is back to its baseline once the clients have gone.

@Suite(.serialized, .ownLiveResources)
struct ServerTests {
    /// Waits until every client is gone and the counter is back to `baseline` (the running
    /// server's, taken part-way through the test).
    func expectBaseline(_ baseline: Int, _ server: StateServer, sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await eventually { server.clientCount == 0 }, "clients \(server.clientCount)", sourceLocation: sourceLocation)
        await LiveResources.expectOwned(baseline, within: .seconds(5), "clients gone", sourceLocation: sourceLocation)
    }

    @Test func greetingDevicesStateStatsOverReplayedFixtures() async throws {
        let devices = ReplayDevices([try ServerFixtures.keyboard, try ServerFixtures.mouse])
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            let hello = try c.read()
            #expect(hello["class"] as? String == "VERSION")
            #expect(hello["release"] as? String == "test")
            #expect(hello["proto_major"] as? Int == 1)

            let list = try c.request(#"{"class":"DEVICES","id":3}"#)
            #expect(list["class"] as? String == "DEVICES")
            #expect(list["id"] as? Int == 3)
            let entries = try #require(list["devices"] as? [[String: Any]])
            let ids = entries.compactMap { $0["id"] as? String }
            #expect(ids.count == 2)
            #expect(ids == ids.sorted())
            #expect(Set(ids) == Set(devices.hub.devices.map(\.id.rawValue)))

            // Play until the keyboard has frames, then ask for its state by id and by name.
            let keyboard = try #require(devices.hub.devices.first { $0.classes.contains(.keyboard) })
            var t: Int64 = 0
            while (devices.hub.store.state(of: keyboard.id)?.counters.framesIn ?? 0) < 5, t < 600_000_000_000 {
                t += 100_000_000
                devices.advance(to: t)
            }
            let byID = try c.request(#"{"class":"STATE","device":"\#(keyboard.id.rawValue)"}"#)
            #expect(byID["class"] as? String == "STATE")
            let desc = try #require(byID["device"] as? [String: Any])
            #expect(desc["name"] as? String == keyboard.name)
            #expect(desc["capabilities"] is [String: Any])
            let counters = try #require(byID["counters"] as? [String: Any])
            let stored = try #require(devices.hub.store.state(of: keyboard.id))
            #expect(counters["frames_in"] as? Int == Int(stored.counters.framesIn))
            #expect(stored.counters.framesIn > 0)
            let byName = try c.request(#"{"class":"STATE","device":"\#(keyboard.name)"}"#)
            #expect((byName["device"] as? [String: Any])?["id"] as? String == keyboard.id.rawValue)

            let unknown = try c.request(#"{"class":"STATE","device":"nope","id":"q"}"#)
            #expect(unknown["class"] as? String == "ERROR")
            #expect(unknown["field"] as? String == "device")
            #expect(unknown["message"] as? String == "no device 'nope'")
            #expect(unknown["id"] as? String == "q")

            let stats = try c.request(#"{"class":"STATS"}"#)
            #expect(stats["devices"] as? Int == 2)
            #expect(stats["clients"] as? Int == 1)
            #expect(stats["watchers"] as? Int == 0)
            // The process-wide count: at least this test's own (other tests may run beside it).
            #expect((stats["live_resources"] as? Int ?? -1) >= LiveResources.owned)
            #expect(LiveResources.owned > 0)
            let perDevice = try #require(stats["device_dropped"] as? [String: Any])
            #expect(Set(perDevice.keys) == Set(ids))
            #expect((stats["client_list"] as? [[String: Any]])?.count == 1)

            let ping = try c.request(#"{"class":"PING","id":17}"#)
            #expect(ping["id"] as? Int == 17)
            #expect(ping["now"] is Int)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
        #expect(access(path, F_OK) != 0, "the socket file is removed at shutdown")
    }

    @Test func watchOverReplayStreamsExactlyTheHubsFilteredFramesThenRemoval() async throws {
        let devices = ReplayDevices([try ServerFixtures.mouse])
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let keyboard = try #require(devices.hub.devices.first)
            // An independent subscriber counts what the hub delivers.
            let expected = Mutex<[Int64]>([])
            let probe = devices.hub.allFrames().filter { $0.device.id == keyboard.id }
                .subscribe(onNext: { f in expected.withLock { $0.append(f.frame.time) } })
            let c = try TestClient(path: path)
            _ = try c.read()
            let w = try c.request(#"{"class":"WATCH","devices":["\#(keyboard.id.rawValue)"],"id":"kb"}"#)
            #expect(w["class"] as? String == "WATCH")
            #expect(w["matched"] as? [String] == [keyboard.id.rawValue])
            #expect(w["stream"] as? String == "filtered")
            devices.advance(to: Int64.max / 4)   // play everything; the device is removed at its end
            var frames: [Int64] = []
            var notice: [String: Any] = [:]
            while true {
                let m = try c.read()
                if m["class"] as? String == "FRAME" {
                    #expect(m["device"] as? String == keyboard.id.rawValue)
                    frames.append(try #require(m["time"] as? Int64 ?? (m["time"] as? Int).map(Int64.init)))
                } else {
                    notice = m
                    break
                }
            }
            probe.dispose()
            #expect(frames == expected.withLock { $0 })
            #expect(frames.count > 10)
            #expect(notice["class"] as? String == "DEVICE")
            #expect(notice["action"] as? String == "removed")
            let stats = try c.request(#"{"class":"STATS"}"#)
            let client = try #require((stats["client_list"] as? [[String: Any]])?.first)
            #expect(client["id"] as? String == "kb")
            #expect(client["sent"] as? Int == frames.count + 1)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    /// docs/protocol.md: "inaccessible … a later `removed` ends it" (the daemon suite's
    /// hot-plug case found watchers never got that `removed`).
    @Test func anInaccessibleDeviceIsAnnouncedAndThenRemoved() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            _ = try c.request(#"{"class":"WATCH"}"#)
            let mouse = testMouse()
            devices.inaccessible(mouse, reason: "Permission denied")
            let announced = try c.read()
            #expect(announced["class"] as? String == "DEVICE")
            #expect(announced["action"] as? String == "inaccessible")
            #expect(announced["reason"] as? String == "Permission denied")
            devices.remove(mouse)
            let removed = try c.read()
            #expect(removed["class"] as? String == "DEVICE")
            #expect(removed["action"] as? String == "removed")
            #expect((removed["device"] as? [String: Any])?["id"] as? String == mouse.id.rawValue)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    @Test func watchSelectsTypesCodesAndStreams() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard(), mouse = testMouse()
        devices.add(kb)
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let keys = try TestClient(path: path)
            let codes = try TestClient(path: path)
            let raw = try TestClient(path: path)
            for c in [keys, codes, raw] { _ = try c.read() }
            let wk = try keys.request(#"{"class":"WATCH","types":["EV_KEY"]}"#)
            #expect(wk["types"] as? [String] == ["EV_KEY"])
            #expect(Set(wk["matched"] as? [String] ?? []) == [kb.id.rawValue, mouse.id.rawValue])
            let wc = try codes.request(#"{"class":"WATCH","codes":["REL_X","BTN_LEFT"],"devices":["Test Mouse"]}"#)
            #expect(wc["matched"] as? [String] == [mouse.id.rawValue])
            _ = try raw.request(#"{"class":"WATCH","devices":["\#(kb.id.rawValue)"],"stream":"raw","types":[1]}"#)

            // Chatter on KEY_A: the filtered stream swallows the bounce, the raw stream has it all.
            for (v, ms) in [(1, 0), (0, 3), (1, 6), (0, 100)] as [(Int32, Int64)] { devices.send(kb.id, keyFrame(30, v, ms: ms)) }
            devices.send(mouse.id, motionFrame(dx: 5, ms: 101))
            devices.send(mouse.id, InputFrame(time: 102_000_000, events: [
                InputEvent(time: 102_000_000, type: EventType.rel, code: 1, value: 2),
                InputEvent(time: 102_000_000, type: EventType.key, code: 0x110, value: 1)]))
            devices.scheduler.advance(by: .milliseconds(200))

            func values(_ m: [String: Any]) -> [String] {
                (m["events"] as? [[String: Any]] ?? []).map { "\($0["type"]!)/\($0["code"]!)=\($0["value"]!)" }
            }
            // keys: KEY_A press and release (filtered), then the mouse's button from the mixed frame.
            let k = try (0..<3).map { _ in try keys.read() }
            #expect(k.map(values) == [["EV_KEY/KEY_A=1"], ["EV_KEY/KEY_A=0"], ["EV_KEY/BTN_LEFT=1"]])
            #expect(k.map { $0["stream"] as? String } == ["filtered", "filtered", "filtered"])
            // codes: REL_X from the first mouse frame, BTN_LEFT (not REL_Y) from the second.
            let c = try (0..<2).map { _ in try codes.read() }
            #expect(c.map(values) == [["EV_REL/REL_X=5"], ["EV_KEY/BTN_LEFT=1"]])
            // raw: all four key frames.
            let r = try (0..<4).map { _ in try raw.read() }
            #expect(r.map(values) == [["EV_KEY/KEY_A=1"], ["EV_KEY/KEY_A=0"], ["EV_KEY/KEY_A=1"], ["EV_KEY/KEY_A=0"]])
            #expect(r.map { $0["stream"] as? String } == ["raw", "raw", "raw", "raw"])
            // Nothing else is pending: the next message answers a PING.
            for client in [keys, codes, raw] { #expect(try client.request(#"{"class":"PING"}"#)["class"] as? String == "PING") }
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    @Test func watchersOfOneShapeShareOneEncodePerFrame() async throws {
        let devices = ManualDevices()
        let mouse = testMouse()
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let same = try (0..<3).map { _ in try TestClient(path: path) }
            let motion = try TestClient(path: path)
            for c in same + [motion] { _ = try c.read() }
            for c in same { _ = try c.request(#"{"class":"WATCH"}"#) }
            _ = try motion.request(#"{"class":"WATCH","codes":["REL_X"]}"#)
            #expect(Set(server.frameEncoders.keys.map(\.stream)) == [.filtered])
            #expect(server.frameEncoders.count == 2)

            // Diagonal motion: the REL_X watcher gets the X part of each frame.
            func diagonal(_ i: Int) -> InputFrame {
                let t = Int64(i) * 20_000_000
                return InputFrame(time: t, events: [InputEvent(time: t, type: EventType.rel, code: 0, value: Int32(i)),
                                                    InputEvent(time: t, type: EventType.rel, code: 1, value: -Int32(i))])
            }
            let frames = (1...6).map(diagonal)
            for frame in frames { devices.send(mouse.id, frame) }
            devices.scheduler.advance(by: .milliseconds(200))

            let lines = try same.map { c in try (0..<frames.count).map { _ in try #require(try c.readLine()) } }
            #expect(lines[1] == lines[0] && lines[2] == lines[0], "every watcher of the shape gets the same bytes")
            // The bytes are the ones a writer of its own makes for the hub's filtered frame.
            var writer = MessageWriter()
            for (line, frame) in zip(lines[0], frames) {
                writer.reset()
                _ = writer.appendFrame(device: mouse.id, stream: .filtered, frame: frame)
                #expect(Array(line.utf8) + [UInt8(ascii: "\n")] == writer.bytes)
            }
            let motionLines = try (0..<frames.count).map { _ in try #require(try motion.readLine()) }
            for (line, frame) in zip(motionLines, frames) {
                writer.reset()
                _ = writer.appendFrame(device: mouse.id, stream: .filtered,
                                       frame: InputFrame(time: frame.time, events: [frame.events[0]]))
                #expect(Array(line.utf8) + [UInt8(ascii: "\n")] == writer.bytes)
            }
            // One encode per frame for the three watchers of the first shape.
            let all = try #require(server.frameEncoders[WatchShape(stream: .filtered, selection: .all, keys: .visible)])
            #expect(all.counts.encodes == frames.count)
            #expect(all.counts.reuses == 2 * frames.count)

            // A shape nobody watches any more leaves the table.
            _ = try motion.request(#"{"class":"UNWATCH"}"#)
            #expect(await eventually { server.frameEncoders.count == 1 })
        }
        #expect(await eventually { server.clientCount == 0 && server.frameEncoders.isEmpty })
        await server.shutdown()
        devices.stop()
    }

    @Test func rateLimitDropsMotionButNeverKeys() async throws {
        let devices = ManualDevices()
        let mouse = testMouse()
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            let w = try c.request(#"{"class":"WATCH","max_rate":10}"#)
            #expect(w["max_rate"] as? Double == 10)
            // 100 motion frames 1 ms apart: a burst of 10 passes, the rest are dropped;
            // a button press in the middle of them passes anyway.
            for i in 0..<100 { devices.send(mouse.id, motionFrame(dx: 1, ms: Int64(i))) }
            devices.send(mouse.id, InputFrame(time: 100_000_000, events: [InputEvent(time: 100_000_000, type: EventType.key, code: 0x110, value: 1)]))
            // A second later the bucket is full again.
            devices.send(mouse.id, motionFrame(dx: 1, ms: 1200))
            var skipped: [[String: Any]] = []
            let stats = try c.request(#"{"class":"STATS"}"#, until: "STATS", skipped: &skipped)
            let frames = skipped.filter { $0["class"] as? String == "FRAME" }
            #expect(frames.count == 12)
            let last = try #require(frames.last?["events"] as? [[String: Any]])
            #expect(last.first?["type"] as? String == "EV_REL")
            let button = try #require(frames.dropLast().last?["events"] as? [[String: Any]])
            #expect(button.first?["code"] as? String == "BTN_LEFT")
            let client = try #require((stats["client_list"] as? [[String: Any]])?.first)
            #expect(client["dropped"] as? Int == 90)
            #expect(client["sent"] as? Int == 12)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    @Test func unwatchAndReplacingWatchStopTheOldStream() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        devices.add(kb)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            _ = try c.request(#"{"class":"WATCH","types":["EV_KEY"]}"#)
            devices.send(kb.id, keyFrame(30, 1, ms: 0))
            #expect(try c.read()["class"] as? String == "FRAME")
            // Replace with a selection that passes nothing of this device.
            let w2 = try c.request(#"{"class":"WATCH","types":["EV_ABS"]}"#)
            #expect(w2["class"] as? String == "WATCH")
            devices.send(kb.id, keyFrame(30, 0, ms: 100))
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
            let u = try c.request(#"{"class":"UNWATCH","id":"u"}"#)
            #expect(u["class"] as? String == "UNWATCH")
            #expect(u["id"] as? String == "u")
            devices.send(kb.id, keyFrame(31, 1, ms: 200))
            devices.add(testKeyboard("Another", product: 2))
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
            let stats = try c.request(#"{"class":"STATS"}"#)
            #expect(stats["watchers"] as? Int == 0)
            // UNWATCH while not watching is answered too.
            #expect(try c.request(#"{"class":"UNWATCH"}"#)["class"] as? String == "UNWATCH")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    @Test func deviceNoticesGoToMatchingWatchersAndRemovalEndsThatPartOfTheWatch() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        devices.add(kb)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            _ = try c.request(#"{"class":"WATCH","devices":["keyboard"]}"#)
            devices.add(testMouse())            // not a keyboard: no notice
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
            let watching = LiveResources.owned
            let kb2 = testKeyboard("Second Keyboard", product: 2)
            devices.add(kb2)
            devices.send(kb2.id, keyFrame(30, 1, ms: 0))
            let added = try c.read()
            #expect(added["class"] as? String == "DEVICE")
            #expect(added["action"] as? String == "added")
            #expect((added["device"] as? [String: Any])?["id"] as? String == kb2.id.rawValue)
            let frame = try c.read()
            #expect(frame["class"] as? String == "FRAME")
            #expect(frame["device"] as? String == kb2.id.rawValue)
            devices.remove(kb2)
            let removed = try c.read()
            #expect(removed["action"] as? String == "removed")
            // kb2's part of the watch is gone; the first keyboard still streams.
            await LiveResources.expectOwned(watching, within: .seconds(5))
            devices.send(kb.id, keyFrame(30, 1, ms: 0))
            #expect(try c.read()["device"] as? String == kb.id.rawValue)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    @Test func badRequestsAreAnsweredAndTheConnectionStaysOpen() async throws {
        let devices = ManualDevices()
        devices.add(testKeyboard())
        devices.add(testKeyboard("Twin", product: 5))
        devices.add(testKeyboard("Twin", product: 6))
        let (server, path) = try await startServer(hub: devices.hub)
        let baseline = LiveResources.owned
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            let cases: [(String, String?, String)] = [
                ("not json", nil, "request is not valid JSON"),
                ("[1,2]", nil, "request must be a JSON object"),
                (#"{"id":1}"#, "class", "missing field 'class'"),
                (#"{"class":7}"#, "class", "field 'class' must be a string"),
                (#"{"class":"FOO"}"#, "class", "unknown request class 'FOO'"),
                (#"{"class":"FRAME"}"#, "class", "'FRAME' is not a request"),
                (#"{"class":"WATCH","type":["EV_KEY"]}"#, "type", "unknown field 'type' for WATCH"),
                (#"{"class":"STATE"}"#, "device", "missing field 'device'"),
                (#"{"class":"STATE","device":""}"#, "device", "field 'device' must not be empty"),
                (#"{"class":"WATCH","types":["EV_KYE"]}"#, "types", "unknown event type 'EV_KYE'"),
                (#"{"class":"WATCH","codes":["KEY_QQ"]}"#, "codes", "unknown event code 'KEY_QQ'"),
                (#"{"class":"WATCH","types":[40]}"#, "types", "event type 40 is out of range 0...31"),
                (#"{"class":"WATCH","stream":"cooked"}"#, "stream", #"field 'stream' must be "filtered", "raw" or "gestures""#),
                (#"{"class":"WATCH","max_rate":0}"#, "max_rate", "field 'max_rate' must be a number greater than 0 and at most 100000"),
                (#"{"class":"PING","id":[1]}"#, "id", "field 'id' must be a string of at most 64 bytes or an integer"),
                (#"{"class":"STATE","device":"ghost"}"#, "device", "no device 'ghost'"),
                (#"{"class":"STATE","device":"Twin"}"#, "device", "several devices are named 'Twin'; use the id"),
            ]
            for (line, field, message) in cases {
                let e = try c.request(line)
                #expect(e["class"] as? String == "ERROR", "\(line)")
                #expect(e["field"] as? String == field, "\(line)")
                #expect(e["message"] as? String == message, "\(line)")
                #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING", "still open after \(line)")
            }
            // An over-long line: one ERROR, the rest of the line discarded, then business as usual.
            try c.sendRaw(Array(#"{"class":"PING","pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 10_000) + Array("\"}\n".utf8))
            let long = try c.read()
            #expect(long["message"] as? String == "request line longer than 4096 bytes")
            // Blank lines are not answered.
            try c.send("   ")
            #expect(try c.request(#"{"class":"DEVICES"}"#)["class"] as? String == "DEVICES")
            // A failed WATCH leaves no watch behind.
            #expect(try c.request(#"{"class":"STATS"}"#)["watchers"] as? Int == 0)
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    @Test func hundredConcurrentClientsQueryAndWatch() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        devices.add(kb)
        warmUp(devices, kb.id)
        let (server, path) = try await startServer(hub: devices.hub) {
            $0.maxClients = 128
            $0.maxClientsPerUser = 128   // every client is this process's uid
        }
        let baseline = LiveResources.owned
        let clients = try (0..<100).map { _ in try TestClient(path: path) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for c in clients {
                group.addTask {
                    _ = try c.read()
                    _ = try c.request(#"{"class":"DEVICES"}"#)
                    _ = try c.request(#"{"class":"WATCH","types":["EV_KEY"]}"#)
                }
            }
            try await group.waitForAll()
        }
        #expect(server.clientCount == 100)
        for i in 0..<20 { devices.send(kb.id, keyFrame(30, Int32(1 - i % 2), ms: 1000 + Int64(i) * 100)) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for c in clients {
                group.addTask {
                    var n = 0
                    while n < 20 {
                        guard try c.read()["class"] as? String == "FRAME" else { break }
                        n += 1
                    }
                    c.close()
                    return n
                }
            }
            for try await n in group { #expect(n == 20) }
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    /// A client sending garbage at 1 MB/s (random bytes, newlines among them, and one line
    /// that never ends) without reading its ERROR replies. The server answers it until its
    /// outbox overflows and drops it; the garbage client connects again and goes on. Meanwhile
    /// another client's queries are answered in time. 3 s here; EVFLOW_GARBAGE_SECONDS=60 for
    /// the full run of docs/reliability.md.
    /// Sends `bytes` without blocking, reading (and dropping) whatever the server replies
    /// meanwhile; false when the connection is gone.
    static func sendDraining(_ client: TestClient, _ bytes: [UInt8], until stop: borrowing Atomic<Bool>) -> Bool {
        var offset = 0
        var sink = [UInt8](repeating: 0, count: 65536)
        while offset < bytes.count {
            while true {
                let n = sink.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n == 0 { return false }
                if n < 0 { break }
            }
            let n = bytes[offset...].withUnsafeBytes {
                Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if n > 0 { offset += n; continue }
            guard errno == EAGAIN || errno == EINTR, !stop.load(ordering: .relaxed) else { return false }
            var p = pollfd(fd: client.fd, events: Int16(POLLIN | POLLOUT), revents: 0)
            _ = poll(&p, 1, 100)
        }
        return true
    }

    @Test func garbageAtOneMegabytePerSecondDoesNotStopOtherClients() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["EVFLOW_GARBAGE_SECONDS"] ?? "") ?? 3
        let devices = ManualDevices()
        let mouse = testMouse()
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub) { $0.outgoingBufferLimit = 64 * 1024 }
        let rssBefore = residentKilobytes()
        let stop = Atomic<Bool>(false)
        let sent = Atomic<Int>(0)
        let connections = Atomic<Int>(0)
        let garbageDone = DispatchSemaphore(value: 0)
        let garbage = Thread {
            var generator = SystemRandomNumberGenerator()
            let start = monotonicNow()
            var client: TestClient?
            while !stop.load(ordering: .relaxed) {
                if client == nil {
                    client = try? TestClient(path: path)
                    if client != nil { connections.add(1, ordering: .relaxed) }
                }
                // 10 KiB chunks paced to 1 MB/s (less when the server makes send wait: it
                // reads a client's requests only while the client reads its replies, so the
                // garbage client drains its ERROR replies as it goes). Every other chunk has
                // no newline at all.
                let chunk = sent.load(ordering: .relaxed) / 10_240
                var bytes = (0..<10_240).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if chunk % 2 == 1 { bytes = bytes.map { $0 == 10 ? 0x41 : $0 } }
                if let c = client, Self.sendDraining(c, bytes, until: stop) {
                    sent.add(bytes.count, ordering: .relaxed)
                } else {
                    client = nil   // dropped: connect again
                }
                let due = start + Int64(sent.load(ordering: .relaxed)) * 1_000   // 1 byte per µs
                let wait = due - monotonicNow()
                if wait > 0 { usleep(UInt32(min(wait / 1_000, 100_000))) }
            }
            garbageDone.signal()
        }
        garbage.start()
        let normal = try TestClient(path: path)
        _ = try normal.read()
        var slowest: Int64 = 0
        var answered = 0
        // At least `seconds`, and until the garbage reached 0.3 MB a second of it: on a loaded
        // machine the garbage thread itself is starved, and a test that sent little proved
        // little (it failed at 0.81 MB in 3 s at load 15). Bounded at 10× the time.
        let began = monotonicNow()
        let end = began + Int64(seconds * 1e9), limit = began + Int64(seconds * 10e9)
        let enough = Int(seconds * 0.3e6)
        while monotonicNow() < limit && (monotonicNow() < end || sent.load(ordering: .relaxed) < enough) {
            let start = monotonicNow()
            let reply = try normal.request(#"{"class":"DEVICES"}"#)
            if reply["class"] as? String == "DEVICES" { answered += 1 }
            slowest = max(slowest, monotonicNow() - start)
            try await Task.sleep(for: .milliseconds(20))
        }
        stop.store(true, ordering: .relaxed)
        let elapsed = Double(monotonicNow() - began) / 1e9
        #expect(garbageDone.wait(timeout: .now() + 10) == .success)
        let megabytes = Double(sent.load(ordering: .relaxed)) / 1e6
        #expect(megabytes >= seconds * 0.3, "the garbage client sent \(megabytes) MB in \(elapsed) s")
        // Bounds for a loaded machine (the AddressSanitizer run, in parallel with the other
        // tests, answered 18 in 3 s, the slowest in 563 ms; alone: 135, 13 ms).
        #expect(answered >= Int(elapsed * 3), "\(answered) DEVICES answered in \(elapsed) s")
        #expect(slowest < 2_000_000_000, "slowest DEVICES round trip \(slowest / 1_000_000) ms")
        normal.close()
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
        print("garbage: \(megabytes) MB over \(connections.load(ordering: .relaxed)) connections in \(elapsed) s; "
              + "\(answered) queries answered, slowest \(slowest / 1_000_000) ms; "
              + "test process RSS \(rssBefore) → \(residentKilobytes()) KiB (alone only: other tests share the process)")
    }

    @Test func aClientThatNeverReadsIsDroppedAndOthersAndThePipelineAreNotSlowed() async throws {
        let devices = ManualDevices()
        let mouse = testMouse()
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub) { $0.outgoingBufferLimit = 32 * 1024 }
        let baseline = LiveResources.owned
        do {
            let slow = try TestClient(path: path, receiveBuffer: 4096)
            let normal = try TestClient(path: path)
            _ = try slow.read()
            _ = try normal.read()
            _ = try slow.request(#"{"class":"WATCH"}"#)
            _ = try normal.request(#"{"class":"WATCH"}"#)
            // The normal client reads on its own thread while the pipeline pushes; the test's
            // feeder keeps within 50 frames (≈ 7 KiB, well under the 32 KiB limit) of that reader (so only the slow one overflows).
            let total = 20_000
            let read = Atomic<Int>(0)
            let readerEnded = Atomic<Bool>(false)
            let readerDone = DispatchSemaphore(value: 0)
            // A real thread, not a Task: the feeder below blocks its own thread while it
            // waits for the reader, and on a 2-core machine a reader Task could find no
            // free thread in the cooperative pool (regression: this test hung now and then).
            let reader = Thread {
                while read.load(ordering: .relaxed) < total {
                    guard let message = try? normal.read(timeout: 20) else { break }
                    guard message["class"] as? String == "FRAME" else { continue }
                    read.add(1, ordering: .relaxed)
                }
                readerEnded.store(true, ordering: .releasing)
                readerDone.signal()
            }
            reader.start()
            var slowestSend: Int64 = 0
            for i in 0..<total {
                while read.load(ordering: .relaxed) < i - 50 && !readerEnded.load(ordering: .acquiring) { usleep(200) }
                let start = monotonicNow()
                devices.send(mouse.id, motionFrame(dx: 1, ms: Int64(i)))
                slowestSend = max(slowestSend, monotonicNow() - start)
            }
            #expect(readerDone.wait(timeout: .now() + 30) == .success)
            #expect(read.load(ordering: .relaxed) == total)
            #expect(await eventually { server.droppedClients == 1 })
            // The pipeline never waited for the slow socket: no single delivery took long
            // (a blocked writer would hang here for ever; generous for shared machines).
            #expect(slowestSend < 100_000_000, "slowest delivery \(slowestSend / 1_000) µs")
            // The slow client reads what was queued for it, then `CLOSE slow-consumer`, then
            // EOF (issue #25, finding 8: it was cut with no CLOSE).
            let lines = try slow.drainToEOF(timeout: 10)
            #expect(lines.count < total)
            let close = try #require(lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            #expect(close["class"] as? String == "CLOSE")
            #expect(close["reason"] as? String == "slow-consumer")
            let stats = try normal.request(#"{"class":"STATS"}"#, until: "STATS")
            #expect((stats["closed"] as? [String: Any])?["slow-consumer"] as? Int == 1)
            #expect(stats["clients"] as? Int == 1)
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    /// Issue #34, bug 4: a watcher dropped as a slow consumer is closed on the server's side
    /// but its connection stays until it has read its `CLOSE` or the 10-s grace runs out; the
    /// shutdown's `CLOSE shutdown` skipped such a client, and `shutdown()` (SIGTERM) waited for
    /// its channel — 5.2 to 10 s. The grace runs on a clock this test moves only after the
    /// shutdown has returned (or failed to within 30 s), so before the fix shutdown waited.
    @Test func shutdownDoesNotWaitForTheGraceOfADroppedSlowWatcher() async throws {
        let devices = ManualDevices()
        let mouse = testMouse()
        devices.add(mouse)
        let timers = ManualServerTimers()
        let (server, path) = try await startServer(hub: devices.hub, timers: timers) { $0.outgoingBufferLimit = 32 * 1024 }
        let slow = try TestClient(path: path, receiveBuffer: 4096)
        _ = try slow.read()
        _ = try slow.request(#"{"class":"WATCH"}"#)
        // Fed in steps of 50 frames (≈ 7 KiB), each flushed to the channel before the next: the
        // kernel's buffers fill, then the channel's, and the drop's CLOSE waits behind them.
        // (Fed at once, the outbox would overflow first and the CLOSE reach an empty socket.)
        var sent = 0
        while server.droppedClients == 0, sent < 200_000 {
            for _ in 0..<50 {
                devices.send(mouse.id, motionFrame(dx: 1, ms: Int64(sent)))
                sent += 1
            }
            try await server.roundTrip()
        }
        #expect(await eventually { server.droppedClients == 1 })
        try await server.roundTrip()
        // Dropped, not gone: its CLOSE is unread, the grace is running.
        #expect(server.clientCount == 1)
        #expect(timers.armed == 1)
        final class Flag: Sendable { let done = Atomic<Bool>(false) }
        let finished = Flag()
        let shutdown = Task {
            await server.shutdown()
            finished.done.store(true, ordering: .releasing)
        }
        let inTime = await eventually(timeout: 30) { finished.done.load(ordering: .acquiring) }
        #expect(inTime, "shutdown waited for the slow consumer's grace")
        if !inTime { try await timers.advance(by: ClientConnection.slowConsumerGrace, after: server) }   // frees it
        await shutdown.value
        withExtendedLifetime(slow) {}
        devices.stop()
    }

    @Test func disconnectMidStreamReleasesTheWatch() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        devices.add(kb)
        warmUp(devices, kb.id)
        let (server, path) = try await startServer(hub: devices.hub)
        let baseline = LiveResources.owned
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            _ = try c.request(#"{"class":"WATCH"}"#)
            #expect(LiveResources.owned > baseline)
            devices.send(kb.id, keyFrame(30, 1, ms: 1000))
            _ = try c.read()
            c.close()
            // The pipeline keeps going while (and after) the client goes away.
            for i in 1..<200 { devices.send(kb.id, keyFrame(30, Int32(i % 2), ms: 1000 + Int64(i) * 50)) }
        }
        await expectBaseline(baseline, server)
        #expect(devices.hub.store.state(of: kb.id)?.counters.framesIn == 202)
        await server.shutdown()
        devices.stop()
    }

    /// The idle limit on a clock the test moves: open a nanosecond before `idleTimeout`,
    /// closed at it (the test used to sleep 400 ms in real time against a 200-ms limit, and
    /// accepted any close within 2 s: an early close passed).
    @Test func idleClientsAreClosedAfterTheTimeout() async throws {
        let devices = ManualDevices()
        let timers = ManualServerTimers()
        let (server, path) = try await startServer(hub: devices.hub, timers: timers) { $0.idleTimeout = .seconds(60) }
        let baseline = LiveResources.owned
        do {
            let idle = try TestClient(path: path)
            let active = try TestClient(path: path)
            _ = try idle.read()   // greeted: its limit is armed
            _ = try active.read()
            _ = try active.request(#"{"class":"PING"}"#)
            try await timers.advance(by: .nanoseconds(60_000_000_000 - 1), after: server)
            #expect(!idle.hasInput, "not closed before its limit")
            try await timers.advance(by: .nanoseconds(1), after: server)
            #expect(idle.hasInput, "closed at its limit")
            let close = try idle.read(timeout: 10)
            #expect(close["class"] as? String == "CLOSE")
            #expect(close["reason"] as? String == "idle")
            #expect(try idle.readLine(timeout: 10) == nil)
            // The client that spoke has the limit after a request (300 s) instead.
            #expect(!active.hasInput)
            #expect(try active.request(#"{"class":"PING"}"#)["class"] as? String == "PING", "a client that spoke stays")
            active.close()
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    /// Issue #25 finding 2: an idle timeout longer than nanoseconds hold (`evflowd
    /// --idle-timeout 10000000000`) trapped in ClientConnection.armIdleTimer as soon as a
    /// client connected; it saturates ("never") now.
    @Test func anIdleTimeoutBeyondNanosecondsDoesNotTrap() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub) {
            $0.idleTimeout = .seconds(10_000_000_000)
            $0.idleTimeoutAfterRequest = .seconds(Int64.max)
        }
        let baseline = LiveResources.owned
        do {
            let client = try TestClient(path: path)
            _ = try client.read()   // the greeting: the timer was armed
            #expect(try client.request(#"{"class":"PING"}"#)["class"] as? String == "PING", "re-armed after a request")
            client.close()
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    /// Regression: the idle timeout applied only before a client's first request; after one
    /// request a client that never watched held a slot for ever. On a clock the test moves
    /// (the test used real 200-ms sleeps against a 300-ms limit: a busy host closed the client
    /// early, and a late close passed): each request re-arms the limit, which closes the
    /// client exactly `idleTimeoutAfterRequest` after its last one.
    @Test func aClientThatIsNotWatchingIsClosedWhenSilentAfterARequest() async throws {
        let devices = ManualDevices()
        let timers = ManualServerTimers()
        let (server, path) = try await startServer(hub: devices.hub, timers: timers) {
            $0.idleTimeoutAfterRequest = .milliseconds(300)
        }
        let baseline = LiveResources.owned
        do {
            let quiet = try TestClient(path: path)
            let watcher = try TestClient(path: path)
            _ = try quiet.read()
            _ = try watcher.read()
            _ = try quiet.request(#"{"class":"PING"}"#)                // t = 0: limit at 300 ms
            _ = try watcher.request(#"{"class":"WATCH"}"#)
            try await timers.advance(by: .milliseconds(200), after: server)
            _ = try quiet.request(#"{"class":"STATS"}"#)               // t = 200: limit at 500 ms
            try await timers.advance(by: .milliseconds(200), after: server)
            #expect(!quiet.hasInput, "t = 400: re-armed by the request at 200")
            _ = try quiet.request(#"{"class":"PING"}"#)                // t = 400: limit at 700 ms
            try await timers.advance(by: .nanoseconds(300_000_000 - 1), after: server)
            #expect(!quiet.hasInput, "open a nanosecond before its limit")
            try await timers.advance(by: .nanoseconds(1), after: server)
            #expect(quiet.hasInput, "closed at its limit")
            let close = try quiet.read(timeout: 10)
            #expect(close["class"] as? String == "CLOSE")
            #expect(close["reason"] as? String == "idle")
            #expect(try quiet.readLine(timeout: 10) == nil)
            // The watcher stayed silent just as long and is still served; after UNWATCH
            // the limit applies to it too.
            #expect(!watcher.hasInput)
            #expect(try watcher.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
            _ = try watcher.request(#"{"class":"UNWATCH"}"#)
            try await timers.advance(by: .nanoseconds(300_000_000 - 1), after: server)
            #expect(!watcher.hasInput)
            try await timers.advance(by: .nanoseconds(1), after: server)
            var skipped: [[String: Any]] = []
            #expect(try watcher.read(until: "CLOSE", skipped: &skipped, timeout: 10)["reason"] as? String == "idle")
            let stats = try TestClient(path: path)
            _ = try stats.read()
            let closed = try stats.request(#"{"class":"STATS"}"#)["closed"] as? [String: Any]
            #expect(closed?["idle"] as? Int == 2)
            stats.close()
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    /// Regression: nothing limited how many of the server's slots one user could take.
    @Test func oneUserGetsAtMostMaxClientsPerUser() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub) { $0.maxClientsPerUser = 2 }
        do {
            let a = try TestClient(path: path), b = try TestClient(path: path)
            _ = try a.read()
            _ = try b.read()
            let third = try TestClient(path: path)
            let close = try third.read()
            #expect(close["reason"] as? String == "too-many-clients")
            #expect((close["message"] as? String)?.contains("per user") == true)
            #expect(try third.readLine() == nil)
            a.close()
            #expect(await eventually { server.clientCount == 1 })
            let fourth = try TestClient(path: path)
            #expect(try fourth.read()["class"] as? String == "VERSION")
            b.close()
            fourth.close()
        }
        await server.shutdown()
        devices.stop()
    }

    @Test func peerCredentialsNotAllowedAreRefused() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub, trustRootAndSelf: false) {
            $0.allowedUIDs = [getuid() &+ 4242]
        }
        let c = try TestClient(path: path)
        let close = try c.read()
        #expect(close["class"] as? String == "CLOSE")
        #expect(close["reason"] as? String == "not-permitted")
        #expect(try c.readLine() == nil)
        #expect(server.clientCount == 0)
        await server.shutdown()

        // Listed by primary group: accepted.
        let (server2, path2) = try await startServer(hub: devices.hub, trustRootAndSelf: false) {
            $0.allowedGIDs = [getgid()]
        }
        let ok = try TestClient(path: path2)
        #expect(try ok.read()["class"] as? String == "VERSION")
        await server2.shutdown()
        devices.stop()
    }

    @Test func theClientLimitRefusesTheNextClient() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub) { $0.maxClients = 2 }
        let baseline = LiveResources.owned
        do {
            let a = try TestClient(path: path), b = try TestClient(path: path)
            _ = try a.read()
            _ = try b.read()
            let third = try TestClient(path: path)
            let close = try third.read()
            #expect(close["reason"] as? String == "too-many-clients")
            #expect(try third.readLine() == nil)
            a.close()
            #expect(await eventually { server.clientCount == 1 })
            let fourth = try TestClient(path: path)
            #expect(try fourth.read()["class"] as? String == "VERSION")
            let stats = try fourth.request(#"{"class":"STATS"}"#)
            #expect((stats["closed"] as? [String: Any])?["too-many-clients"] as? Int == 1)
        }
        await expectBaseline(baseline, server)
        await server.shutdown()
        devices.stop()
    }

    @Test func shutdownClosesClientsWithAReasonAndASecondServerIsRefusedWhileOneListens() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub)
        let other = StateServer(configuration: StateServerConfiguration(socketPath: path, release: "x"),
                                hub: devices.hub, logger: testLogger)
        await #expect(throws: StateServerError.self) { try await other.start() }
        await other.shutdown()
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o660)
        let c = try TestClient(path: path)
        _ = try c.read()
        _ = try c.request(#"{"class":"WATCH"}"#)
        await server.shutdown()
        let close = try c.read()
        #expect(close["reason"] as? String == "shutdown")
        #expect(try c.readLine() == nil)
        #expect(access(path, F_OK) != 0)
        devices.stop()
    }
}

extension ServerTests {
    @Test func socketActivationAdoptsTheListeningFDAndLeavesItsFile() async throws {
        let devices = ManualDevices()
        let path = temporarySocketPath()
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(fd, 16) == 0)
        var config = StateServerConfiguration(socketPath: path, release: "activated")
        config.listenFD = fd
        let server = StateServer(configuration: config, hub: devices.hub, logger: testLogger)
        try await server.start()
        let c = try TestClient(path: path)
        #expect(try c.read()["release"] as? String == "activated")
        await server.shutdown()
        #expect(access(path, F_OK) == 0, "an adopted socket's file belongs to systemd")
        unlink(path)
        devices.stop()
    }
}

extension TestClient {
    /// Sends a request and reads until the reply of class `cls`, collecting stream messages.
    func request(_ line: String, until cls: String, skipped: inout [[String: Any]]) throws -> [String: Any] {
        try send(line)
        return try read(until: cls, skipped: &skipped)
    }

    /// Sends a request and reads until the reply of class `cls`.
    func request(_ line: String, until cls: String) throws -> [String: Any] {
        var skipped: [[String: Any]] = []
        return try request(line, until: cls, skipped: &skipped)
    }
}

/// `syscall(2)` with two arguments: the raw system call changes the calling thread's
/// credentials only (glibc's `setgroups` changes every thread's). glibc's `syscall` is an
/// assembly stub that only moves registers, so calling it without the C variadic convention
/// is safe on x86-64 and arm64.
@_silgen_name("syscall")
private func rawSyscall(_ number: Int, _ count: Int, _ groups: UnsafePointer<gid_t>?) -> Int

/// `__NR_setgroups` (Glibc does not export the `SYS_` names to Swift).
#if arch(x86_64)
private let SYS_setgroups = 116
#elseif arch(arm64)
private let SYS_setgroups = 159
#endif

/// Connects from a thread whose supplementary groups are `groups` at `connect()`; the rest of
/// the process (what `/proc/PID/status` shows) keeps its own. Needs CAP_SETGID (root).
func connectWithThreadGroups(_ groups: [gid_t], path: String) throws -> TestClient {
    let saved: [gid_t] = {
        var g = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
        let n = getgroups(Int32(g.count), &g)
        return Array(g.prefix(Int(max(n, 0))))
    }()
    let result = Mutex<Result<TestClient, any Error>?>(nil)
    let thread = Thread {
        let set = groups.withUnsafeBufferPointer { rawSyscall(SYS_setgroups, $0.count, $0.baseAddress) }
        let r: Result<TestClient, any Error> = set == 0
            ? Result { try TestClient(path: path) }
            : .failure(TestClientError(description: "setgroups: errno \(errno)"))
        _ = saved.withUnsafeBufferPointer { rawSyscall(SYS_setgroups, $0.count, $0.baseAddress) }
        result.withLock { $0 = r }
    }
    thread.start()
    while result.withLock({ $0 == nil }) { usleep(1000) }
    return try result.withLock { $0! }.get()
}

@Suite(.ownLiveResources) struct PeerGroupTests {
    /// Regression: supplementary groups were read from `/proc/PID/status` after connect — the
    /// process's groups at check time (racy), and hidden by the unit's `ProtectProc=invisible`
    /// for other users' processes, so `--allow-group` for a supplementary group never matched.
    /// They come from `SO_PEERGROUPS` now: the groups the peer had when it connected.
    @Test(.enabled(if: getuid() == 0, "needs CAP_SETGID to give one thread other groups"))
    func aSupplementaryGroupAtConnectIsAllowedFromSOPeerGroups() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub, trustRootAndSelf: false) {
            $0.allowedGIDs = [4242]
        }
        let member = try connectWithThreadGroups([17, 4242], path: path)
        #expect(try member.read()["class"] as? String == "VERSION")
        // The same process, connecting with its own groups: refused.
        let outsider = try TestClient(path: path)
        #expect(try outsider.read()["reason"] as? String == "not-permitted")
        // Another supplementary group: refused.
        let other = try connectWithThreadGroups([4243], path: path)
        #expect(try other.read()["reason"] as? String == "not-permitted")
        await server.shutdown()
        devices.stop()
    }

    @Test func theGroupBufferDropsOnlyTheZeroPadding() {
        var b = PeerCredentials.GroupBuffer()
        #expect(b.groups == [])
        b.a[0] = 0; b.a[1] = 5; b.b[3] = 70000
        #expect(b.groups == [0, 5] + [UInt32](repeating: 0, count: 64 + 3 - 2) + [70000])
        #expect(MemoryLayout<PeerCredentials.GroupBuffer>.size == PeerCredentials.GroupBuffer.capacity * 4)
    }
}

/// This process's resident set (VmRSS) in KiB, 0 if unreadable.
func residentKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
}
