import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Reactive
import Recording
import ReactiveTesting
import Testing

/// Golden replay tests (see docs/golden.md): every shipped recording is replayed through the
/// default pipeline in virtual time; the filtered frames and each device's final state must
/// match the committed files in `Tests/Fixtures/golden/` byte for byte.
///
/// The final state of a device is captured when its recorded frames complete — after the
/// filter stage has processed the last frame, right before the hub removes the device from
/// the store (values still held for a window's end are dropped by the removal and are not
/// in it).
@Suite("Golden replay", .ownLiveResources) struct GoldenReplayTests {
    /// What one replay produced.
    struct Output: Equatable {
        /// One line per filtered frame: `<time_ns> <device id> <TYPE> <CODE> <value> ...`.
        var frames: String
        /// Final states as JSON with sorted keys.
        var state: String
    }

    /// The final state of one device as written to the golden file: names instead of numbers,
    /// String-keyed (so key order is sorted and stable), nothing that depends on hashing.
    struct GoldenState: Encodable {
        struct Counts: Encodable { var dropped: UInt64, delayed: UInt64, merged: UInt64 }
        struct Counters: Encodable {
            var framesIn, eventsIn, framesOut, eventsOut, framesDropped, synDropped: UInt64
            var filters: [String: Counts]
        }
        var id: String
        var name: String
        var classes: [String]
        var keysDown: [String]
        var absolute: [String: Int32]
        var switchesOn: [String]
        var ledsOn: [String]
        var lastEventTime: Int64?
        var counters: Counters

        init(_ s: DeviceState) {
            id = s.info.id.rawValue
            name = s.info.name
            classes = s.info.classes.map(\.rawValue).sorted()
            keysDown = s.keysDown.map { EventNames.codeText(type: EventType.key, code: $0) }
            absolute = Dictionary(uniqueKeysWithValues: s.absolute.map {
                (EventNames.codeText(type: EventType.abs, code: $0.key), $0.value)
            })
            switchesOn = s.switchesOn.map { EventNames.codeText(type: EventType.sw, code: $0) }
            ledsOn = s.ledsOn.map { EventNames.codeText(type: EventType.led, code: $0) }
            lastEventTime = s.lastEventTime
            let c = s.counters
            var filters: [String: Counts] = [:]
            for kind in FilterKind.allCases where c[kind] != FilterCounts() {
                filters[kind.rawValue] = Counts(dropped: c[kind].dropped, delayed: c[kind].delayed,
                                                merged: c[kind].merged)
            }
            counters = Counters(framesIn: c.framesIn, eventsIn: c.eventsIn, framesOut: c.framesOut,
                                eventsOut: c.eventsOut, framesDropped: c.framesDropped,
                                synDropped: c.synDropped, filters: filters)
        }
    }

    /// A filtered frame as one line.
    static func line(_ f: InputFrame, device: DeviceID) -> String {
        var s = "\(f.time) \(device.rawValue)"
        for e in f.events {
            s += " \(EventNames.typeText(e.type)) \(EventNames.codeText(type: e.type, code: e.code)) \(e.value)"
        }
        return s
    }

    /// Replays `recording` through a `DeviceHub` with `config` (the default configuration) on a
    /// `VirtualTimeScheduler`, until nothing is left to do; disposes everything.
    static func replay(_ recording: Recording, speed: Double = 1, config: FilterConfig = FilterConfig()) throws -> Output {
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, speed: speed)
        let store = StateStore()
        let hub = DeviceHub(store: store, config: config, scheduler: scheduler, latencyClock: .replay)
        var lines: [String] = []
        var finalStates: [(DeviceID, DeviceState?)] = []
        let watchers = CompositeDisposable()
        let changes = hub.allFrames().subscribe(onNext: { lines.append(line($0.frame, device: $0.device.id)) })
        let running = hub.run(replay.devices.map { stream in
            let id = stream.info.id
            return DeviceStream(info: stream.info, access: stream.access,
                                frames: stream.frames.do(onCompleted: { finalStates.append((id, store.state(of: id))) }),
                                clock: stream.clock)
        })
        scheduler.run()
        #expect(hub.deviceCount == 0, "every device was removed at the end of the replay")
        #expect(store.count == 0)
        running.dispose()
        changes.dispose()
        watchers.dispose()
        scheduler.run()   // the hub is disposed on its scheduler

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var states: [GoldenState] = []
        for (id, state) in finalStates {
            guard let state else {
                Issue.record("no state for \(id) at its removal")
                continue
            }
            states.append(GoldenState(state))
        }
        let json = String(decoding: try encoder.encode(states), as: UTF8.self) + "\n"
        return Output(frames: lines.map { $0 + "\n" }.joined(), state: json)
    }

    static let goldenRoot = Fixtures.root.appendingPathComponent("golden")
    static var updating: Bool { ProcessInfo.processInfo.environment["EVFLOW_UPDATE_GOLDEN"] == "1" }

    /// Compares `actual` with the golden file (or rewrites it when updating).
    static func compare(_ actual: String, golden name: String) throws {
        let url = goldenRoot.appendingPathComponent(name)
        if updating {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: url)
            return
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            Issue.record("missing golden file \(name); run with EVFLOW_UPDATE_GOLDEN=1 and review the diff")
            return
        }
        let expected = String(decoding: data, as: UTF8.self)
        if expected == actual { return }
        let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var i = 0
        while i < min(e.count, a.count), e[i] == a[i] { i += 1 }
        let want = i < e.count ? String(e[i]) : "<end of file>"
        let got = i < a.count ? String(a[i]) : "<end of output>"
        Issue.record("""
            \(name) differs at line \(i + 1):
              golden: \(want)
              actual: \(got)
            (run with EVFLOW_UPDATE_GOLDEN=1 to rewrite, then review the diff; see docs/golden.md)
            """)
    }

    @Test("replay matches the golden files, twice", arguments: Fixtures.recordings())
    func golden(path: String) throws {
        let recording = try Recording.read(contentsOf: Fixtures.recording(path))
        let first = try Self.replay(recording)
        let second = try Self.replay(recording)
        #expect(first == second, "two replays of \(path) differ")
        #expect(!first.frames.isEmpty)
        try Self.compare(first.frames, golden: path + ".frames.txt")
        try Self.compare(first.state, golden: path + ".state.json")
    }

    /// The frame lines of each device, in their order (devices sorted by id): across devices
    /// the delivery order may differ with the speed, within one device it must not.
    static func perDevice(_ frames: String) -> [String: [Substring]] {
        var by: [String: [Substring]] = [:]
        for line in frames.split(separator: "\n") {
            let id = line.split(separator: " ", maxSplits: 2)[1]
            by[String(id), default: []].append(line)
        }
        return by
    }

    @Test("replay speed does not change what is filtered: speeds 0 (as fast as possible), 1 and 50 give the golden output",
          arguments: Fixtures.recordings())
    func speedIndependent(path: String) throws {
        let recording = try Recording.read(contentsOf: Fixtures.recording(path))
        let golden = try String(contentsOf: Self.goldenRoot.appendingPathComponent(path + ".frames.txt"), encoding: .utf8)
        let goldenState = try String(contentsOf: Self.goldenRoot.appendingPathComponent(path + ".state.json"), encoding: .utf8)
        for speed in [Double.infinity, 1, 50] {
            let out = try Self.replay(recording, speed: speed)
            #expect(Self.perDevice(out.frames) == Self.perDevice(golden), "\(path) at speed \(speed)")
            #expect(out.state == goldenState, "\(path) at speed \(speed)")
        }
    }

    /// Handmade recordings whose keys bounce inside the default chatter window: the shipped
    /// real ones hold nothing for a window's end (their filters only drop frames, at once),
    /// so they alone would not show whether a window's timer waits for the frames recorded
    /// inside it.
    static let bouncing = ["handmade/worn-keyboard.evemu", "handmade/worn-mouse.evtest"]

    @Test("below speed 1 too: speeds 0.25, 0.5, 1, 3 and max give the same filtered frames and final state",
          arguments: Fixtures.recordings().map { "recordings/" + $0 } + bouncing)
    func sameFramesAtSlowSpeeds(path: String) throws {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(path))
        let atPace = try Self.replay(recording, speed: 1)
        #expect(!atPace.frames.isEmpty)
        for speed in [0.25, 0.5, 3, Double.infinity] {
            let out = try Self.replay(recording, speed: speed)
            #expect(Self.perDevice(out.frames) == Self.perDevice(atPace.frames), "\(path) at speed \(speed)")
            #expect(out.state == atPace.state, "\(path) at speed \(speed)")
        }
    }

    @Test("a looping replay: each pass's streams carry the clock their frames are delivered by", arguments: [0.5, 3])
    func loopingClock(speed: Double) throws {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(Self.bouncing[0]))
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, speed: speed, loop: true)
        var streams = 0, frames = 0
        var off: [String] = []
        let inner = CompositeDisposable()
        let running = replay.devices.subscribe(onNext: { stream in
            streams += 1
            let clock = stream.clock
            _ = inner.insert(stream.frames.subscribe(onNext: { frame in
                frames += 1
                // In virtual time a frame comes exactly when due: a deadline of its time fires
                // right after it, neither before (a window closing early) nor later.
                if clock.schedulerTime(frame.time) != scheduler.now + 1 {
                    off.append("pass \(streams): \(frame.time) at \(scheduler.now)")
                }
            }))
        })
        let last = recording.devices.flatMap(\.events).map(\.time).max() ?? 0
        let pass = Int64((Double(last) / speed).rounded(.up)) + 1_000_000_000
        scheduler.advance(by: RxTimeInterval(nanoseconds: 3 * pass + pass / 2))   // into the fourth pass
        running.dispose()
        inner.dispose()
        scheduler.run()
        #expect(streams >= 3)
        #expect(frames > 0)
        #expect(off.isEmpty, "frames whose clock does not say when they came: \(off.prefix(3))")
    }

    @Test("every shipped recording has golden files, and no golden file is orphaned")
    func goldenSetComplete() throws {
        let recordings = Set(Fixtures.recordings())
        #expect(recordings.count >= 10)
        guard let walker = FileManager.default.enumerator(atPath: Self.goldenRoot.path) else {
            Issue.record("no golden folder")
            return
        }
        var goldens = Set<String>()
        for case let path as String in walker where path.hasSuffix(".frames.txt") || path.hasSuffix(".state.json") {
            goldens.insert(path)
        }
        var expected = Set<String>()
        for r in recordings { expected.insert(r + ".frames.txt"); expected.insert(r + ".state.json") }
        expected.formUnion(WheelReplayTests.goldenFiles)   // a handmade recording replayed with wheel: on
        #expect(goldens == expected)
    }
}
