import Foundation
import InputModel
import Testing
@testable import EvflowProtocol
@testable import StateServer
#if canImport(Glibc)
import Glibc
#endif

/// Issue #25, finding 10: any client that could connect could WATCH every key of every
/// keyboard — a password logger. Key codes now go only to root, evflowd's user and the
/// `--keys-group` members; everyone else gets `KEY_UNKNOWN` (times and values kept) and no
/// scan codes, and the greeting says which.
@Suite(.ownLiveResources) struct KeyPrivacyTests {
    let kb = DeviceID(rawValue: "0003:1234:0001-00000001")

    @Test func keysAndScanCodesAreHiddenButtonsAndEverythingElseNot() {
        for code: UInt16 in [1, 30, 42, 240, 248, 0x160, 0x1d0, 0x200, 0x220, 0x2ff] {   // KEY_ESC … KEY_NUMERIC_0 …
            #expect(KeyPrivacy.hides(type: EventType.key, code: code), "EV_KEY \(code)")
        }
        for code: UInt16 in [0x100, 0x110, 0x111, 0x120, 0x130, 0x140, 0x145, 0x14a, 0x151, 0x2c0, 0x2e7] {   // BTN_*
            #expect(!KeyPrivacy.hides(type: EventType.key, code: code), "EV_KEY \(code)")
        }
        #expect(KeyPrivacy.hides(type: EventType.msc, code: 4))    // MSC_SCAN
        #expect(KeyPrivacy.hides(type: EventType.msc, code: 3))    // MSC_RAW
        #expect(!KeyPrivacy.hides(type: EventType.msc, code: 0))   // MSC_SERIAL
        #expect(!KeyPrivacy.hides(type: EventType.msc, code: 5))   // MSC_TIMESTAMP
        for type in [EventType.syn, EventType.rel, EventType.abs, EventType.sw, EventType.led, EventType.rep] {
            #expect(!KeyPrivacy.hides(type: type, code: 30))
        }
        #expect(EventNames.codeName(type: EventType.key, code: KeyPrivacy.placeholder) == "KEY_UNKNOWN")
    }

    @Test func aHiddenFrameKeepsTimesValuesAndButtonsAndLosesKeyCodesAndScanCodes() {
        let frame = InputFrame(time: 5_000, events: [
            InputEvent(time: 5_000, type: EventType.msc, code: 4, value: 0x70004),
            InputEvent(time: 4_000, type: EventType.key, code: 30, value: 1),
            InputEvent(time: 5_000, type: EventType.key, code: 0x110, value: 1),
            InputEvent(time: 5_000, type: EventType.rel, code: 0, value: -3),
        ])
        var w = MessageWriter()
        let written = w.appendFrame(device: kb, stream: .raw, frame: frame, keys: .hidden)
        #expect(written)
        #expect(String(decoding: w.bytes, as: UTF8.self) == #"{"class":"FRAME","device":"\#(kb.rawValue)","time":5000,"stream":"raw","events":[{"type":"EV_KEY","code":"KEY_UNKNOWN","value":1,"time":4000},{"type":"EV_KEY","code":"BTN_LEFT","value":1},{"type":"EV_REL","code":"REL_X","value":-3}]}"# + "\n")
        // Auto-repeat keeps its value.
        w.reset()
        _ = w.appendFrame(device: kb, stream: .filtered, frame: keyFrame(31, 2, ms: 1), keys: .hidden)
        #expect(String(decoding: w.bytes, as: UTF8.self).contains(#"[{"type":"EV_KEY","code":"KEY_UNKNOWN","value":2}]"#))
        // Visible: as it came.
        w.reset()
        _ = w.appendFrame(device: kb, stream: .raw, frame: frame, keys: .visible)
        #expect(String(decoding: w.bytes, as: UTF8.self).contains(#""code":"MSC_SCAN","value":458756},{"type":"EV_KEY","code":"KEY_A""#))
        // A frame of scan codes only has nothing left to send.
        w.reset()
        let scanOnly = InputFrame(time: 9, events: [InputEvent(time: 9, type: EventType.msc, code: 4, value: 30)])
        let scanWritten = w.appendFrame(device: kb, stream: .raw, frame: scanOnly, keys: .hidden)
        #expect(!scanWritten)
        #expect(w.bytes.isEmpty)
    }

    @Test("issue #31: a key's chatter count names the key; hidden, only buttons' and non-text keys' are shown (the gestures' rule)")
    func hiddenStateShowsChatterOfButtonsAndNonTextKeysOnly() throws {
        var info = DeviceInfo(name: "k", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 3))
        info.id = kb
        let report = DeviceStateReport(device: info, counters: DeviceCounters(chatterByKey: [30: 4, 183: 2, 0x100: 7]))
        #expect(KeyPrivacy.redacted(report).counters.chatterByKey == [183: 2, 0x100: 7])
        var w = MessageWriter()
        w.appendState(report)
        #expect(String(decoding: w.bytes, as: UTF8.self).contains(#""chatter_by_key":{"KEY_A":4,"KEY_F13":2,"BTN_0":7}"#))
    }

    @Test func hiddenStateCountsKeysDownAsUnknownAndHiddenStatsNameNoKey() throws {
        var info = DeviceInfo(name: "k", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 3))
        info.id = kb
        let report = DeviceStateReport(device: info, keysDown: [30, 42, 0x110])
        #expect(KeyPrivacy.redacted(report).keysDown == [240, 240, 0x110])
        var w = MessageWriter()
        w.appendState(KeyPrivacy.redacted(report))
        #expect(String(decoding: w.bytes, as: UTF8.self).contains(#""keys_down":["KEY_UNKNOWN","KEY_UNKNOWN","BTN_LEFT"]"#))
        #expect(!String(decoding: w.bytes, as: UTF8.self).contains("chatter_by_key"), "written only when a key chattered")

        var stats = ServerStats(release: "r", uptime: 0, now: 0, devices: 1, clients: 1, watchers: 0, liveResources: 0)
        stats.spuriousRelease = [kb: ["KEY_E", "BTN_LEFT", "767"]]
        #expect(KeyPrivacy.redacted(stats).spuriousRelease == [kb: ["KEY_UNKNOWN", "BTN_LEFT", "KEY_UNKNOWN"]])
    }

    @Test func whoSeesKeys() {
        func access(trust: Bool, groups: Set<UInt32>) -> KeyAccess {
            var c = StateServerConfiguration(socketPath: "/x", release: "t")
            c.keysGIDs = groups
            return KeyAccess(configuration: c, trustRootAndSelf: trust)
        }
        func peer(uid: UInt32, gid: UInt32, groups: [UInt32] = []) -> PeerCredentials {
            PeerCredentials(pid: 1, uid: uid, gid: gid, groups: groups)
        }
        let policy = access(trust: true, groups: [4242])
        #expect(policy.visibility(for: peer(uid: 0, gid: 0)) == .visible)
        #expect(policy.visibility(for: peer(uid: geteuid(), gid: 7)) == .visible)
        #expect(policy.visibility(for: peer(uid: 1000, gid: 1000)) == .hidden)
        #expect(policy.visibility(for: peer(uid: 1000, gid: 4242)) == .visible)            // primary group
        #expect(policy.visibility(for: peer(uid: 1000, gid: 1000, groups: [27, 4242])) == .visible)
        #expect(policy.visibility(for: peer(uid: 1000, gid: 1000, groups: [27, 4243])) == .hidden)
        #expect(policy.visibility(for: nil) == .hidden)                                     // no credentials
        // Not trusting root and self (how the tests, running as root, are someone else).
        #expect(access(trust: false, groups: []).visibility(for: peer(uid: 0, gid: 0)) == .hidden)
        #expect(access(trust: false, groups: [0]).visibility(for: peer(uid: 0, gid: 0)) == .visible)
    }

    @Test func aHiddenClientCannotSelectOneKey() throws {
        func watch(_ line: String) throws -> WatchRequest {
            guard case .watch(let w) = try Request.parse(line).kind else { throw TestClientError(description: line) }
            return w
        }
        for line in [#"{"class":"WATCH","codes":["KEY_A"]}"#, #"{"class":"WATCH","codes":["REL_X","EV_KEY:30"]}"#,
                     #"{"class":"WATCH","codes":["MSC_SCAN"]}"#, #"{"class":"WATCH","codes":["KEY_UNKNOWN"]}"#] {
            let refusal = try #require(KeyAccess.refusal(of: try watch(line), keys: .hidden, tag: .integer(1)), "\(line)")
            #expect(refusal.field == "codes")
            #expect(refusal.requestClass == "WATCH")
            #expect(refusal.tag == .integer(1))
            #expect(KeyAccess.refusal(of: try watch(line), keys: .visible, tag: nil) == nil)
        }
        #expect(KeyAccess.refusal(of: try watch(#"{"class":"WATCH","codes":["BTN_LEFT","REL_X"],"types":["EV_KEY"]}"#),
                                  keys: .hidden, tag: nil) == nil)
        let refusal = try #require(KeyAccess.refusal(of: try watch(#"{"class":"WATCH","codes":["KEY_A"]}"#), keys: .hidden, tag: nil))
        #expect(refusal.message.contains("'KEY_A'"))
    }

    @Test func hiddenAndVisibleWatchersOfOneSelectionAreTwoShapesEachEncodedOncePerFrame() {
        let encoders = SharedFrameEncoders(names: .standard)
        let hidden = encoders.encoder(for: WatchShape(stream: .filtered, selection: .all, keys: .hidden))
        let hidden2 = encoders.encoder(for: WatchShape(stream: .filtered, selection: .all, keys: .hidden))
        let visible = encoders.encoder(for: WatchShape(stream: .filtered, selection: .all, keys: .visible))
        #expect(hidden === hidden2)
        #expect(hidden !== visible)
        let press = keyFrame(30, 1, ms: 3)
        let a = hidden.encode(device: kb, frame: press), b = hidden2.encode(device: kb, frame: press)
        #expect(a == b)
        #expect(hidden.counts == (1, 1))
        #expect(String(decoding: a ?? [], as: UTF8.self).contains(#""code":"KEY_UNKNOWN","value":1"#))
        #expect(String(decoding: visible.encode(device: kb, frame: press) ?? [], as: UTF8.self).contains(#""code":"KEY_A","value":1"#))
    }

    @Test func theGreetingsKeysDecodesAndAnOlderServersGreetingHasNone() throws {
        var w = MessageWriter()
        w.appendVersion(release: "r", keys: .hidden)
        #expect(try ServerMessage.decode(w.bytes.dropLast()) == .version(release: "r", protoMajor: 1, protoMinor: 8, keys: .hidden))
        let old = Array(#"{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":1}"#.utf8)
        #expect(try ServerMessage.decode(old[...]) == .version(release: "0.1.0", protoMajor: 1, protoMinor: 1, keys: nil))
    }
}

/// The same over a real socket: the server decides per client at admission, from the peer's
/// credentials. The tests run as root, so they turn off "root and self always see keys" to be
/// an ordinary user, and name their own group as the key group to be a member.
@Suite(.serialized, .ownLiveResources) struct KeyPrivacyServerTests {
    func values(_ m: [String: Any]) -> [String] {
        (m["events"] as? [[String: Any]] ?? []).map { "\($0["type"]!)/\($0["code"]!)=\($0["value"]!)" }
    }

    @Test func anOrdinaryClientGetsKeysHiddenAndAKeyGroupMemberGetsThem() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard(), mouse = testMouse()
        devices.add(kb)
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub, trustRootAndSelf: false) {
            $0.keysGIDs = [getgid() &+ 4242]
        }
        let (server2, path2) = try await startServer(hub: devices.hub, trustRootAndSelf: false) {
            $0.keysGIDs = [getgid()]
        }
        do {
            let hidden = try TestClient(path: path)
            let hidden2 = try TestClient(path: path)
            let member = try TestClient(path: path2)
            #expect(try hidden.read()["keys"] as? String == "hidden")
            #expect(try hidden2.read()["keys"] as? String == "hidden")
            let hello = try member.read()
            #expect(hello["keys"] as? String == "visible")
            #expect(hello["proto_minor"] as? Int == 8)

            // Selecting one key is refused; the watch in force stays.
            _ = try hidden.request(#"{"class":"WATCH","types":["EV_KEY"]}"#)
            let refused = try hidden.request(#"{"class":"WATCH","codes":["KEY_A"],"id":"k"}"#)
            #expect(refused["class"] as? String == "ERROR")
            #expect(refused["field"] as? String == "codes")
            #expect(refused["id"] as? String == "k")
            _ = try hidden2.request(#"{"class":"WATCH","types":["EV_KEY"],"stream":"raw"}"#)
            _ = try member.request(#"{"class":"WATCH","types":["EV_KEY"]}"#)

            devices.send(kb.id, InputFrame(time: 0, events: [
                InputEvent(time: 0, type: EventType.msc, code: 4, value: 0x70004),
                InputEvent(time: 0, type: EventType.key, code: 30, value: 1)]))
            devices.send(kb.id, keyFrame(30, 0, ms: 100))
            devices.send(mouse.id, keyFrame(0x110, 1, ms: 150))
            devices.scheduler.advance(by: .milliseconds(300))

            let h = try (0..<3).map { _ in try hidden.read() }
            #expect(h.map(values) == [["EV_KEY/KEY_UNKNOWN=1"], ["EV_KEY/KEY_UNKNOWN=0"], ["EV_KEY/BTN_LEFT=1"]])
            let r = try (0..<3).map { _ in try hidden2.read() }
            #expect(r.map(values) == [["EV_KEY/KEY_UNKNOWN=1"], ["EV_KEY/KEY_UNKNOWN=0"], ["EV_KEY/BTN_LEFT=1"]])
            let m = try (0..<3).map { _ in try member.read() }
            #expect(m.map(values) == [["EV_KEY/KEY_A=1"], ["EV_KEY/KEY_A=0"], ["EV_KEY/BTN_LEFT=1"]])
            // The timing is the same for both.
            #expect(h.map { $0["time"] as? Int } == m.map { $0["time"] as? Int })
            #expect(h.compactMap { $0["time"] as? Int }.count == 3)
            #expect(server.frameEncoders.keys.map(\.keys).allSatisfy { $0 == .hidden })
            #expect(server2.frameEncoders.keys.map(\.keys) == [.visible])

            // STATE: the keys held, counted but not named.
            devices.send(kb.id, keyFrame(42, 1, ms: 400))
            devices.send(kb.id, keyFrame(31, 1, ms: 401))
            devices.scheduler.advance(by: .milliseconds(300))
            let state = #"{"class":"STATE","device":"\#(kb.id.rawValue)"}"#
            var skipped: [[String: Any]] = []
            try hidden.send(state)
            let hiddenState = try hidden.read(until: "STATE", skipped: &skipped)
            #expect(hiddenState["keys_down"] as? [String] == ["KEY_UNKNOWN", "KEY_UNKNOWN"])
            #expect(skipped.map(values) == [["EV_KEY/KEY_UNKNOWN=1"], ["EV_KEY/KEY_UNKNOWN=1"]])
            skipped = []
            try member.send(state)
            let memberState = try member.read(until: "STATE", skipped: &skipped)
            #expect(memberState["keys_down"] as? [String] == ["KEY_S", "KEY_LEFTSHIFT"])
        }
        #expect(await eventually { server.clientCount == 0 && server2.clientCount == 0 })
        await server.shutdown()
        await server2.shutdown()
        devices.stop()
    }

    @Test func rootAndTheServersOwnUserSeeKeys() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            #expect(try c.read()["keys"] as? String == "visible")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }

    /// The key group counts as a supplementary group too, as the kernel recorded it at connect.
    @Test(.enabled(if: getuid() == 0, "needs CAP_SETGID to give one thread other groups"))
    func aSupplementaryKeyGroupAtConnectSeesKeys() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub, trustRootAndSelf: false) {
            $0.keysGIDs = [4242]
        }
        do {
            let member = try connectWithThreadGroups([17, 4242], path: path)
            #expect(try member.read()["keys"] as? String == "visible")
            let other = try connectWithThreadGroups([4243], path: path)
            #expect(try other.read()["keys"] as? String == "hidden")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }
}
