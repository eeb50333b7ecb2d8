import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Reactive
import Recording
import ReactiveTesting
import Testing

/// Golden hot-plug replays (docs/golden.md, "Sessions"): the session fixtures under
/// `Tests/Fixtures/sessions/` replayed through `ReplaySource` → `DeviceHub` (default
/// configuration) → `StateStore` in virtual time, as `GoldenReplayTests` does for plain
/// recordings — so devices are added and removed at their recorded times and the device-scope
/// disposal path runs from a recording.
@Suite("Golden session replay", .ownLiveResources) struct GoldenSessionReplayTests {
    /// One replay of a session with a watcher of device changes.
    final class Run {
        let scheduler = VirtualTimeScheduler()
        let replay: ReplaySource
        let store = StateStore()
        let hub: DeviceHub
        /// What a watcher of the hub saw: `<ms> + <id>` when a device appeared, `<ms> - <id>`
        /// when its stream completed (the device was removed).
        var changes: [String] = []
        /// The ids of the streams the replay announced, in order.
        var announced: [DeviceID] = []
        private var running: Disposable?
        private var watcher: Disposable?

        init(_ session: Session) {
            replay = ReplaySource(sessions: [session], scheduler: scheduler)
            hub = DeviceHub(store: store, config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
            watcher = hub.streams().subscribe(onNext: { [unowned self] update in
                switch update {
                case .present(let streams): streams.forEach(self.watch)
                case .added(let stream): self.watch(stream)
                }
            })
            running = hub.run(replay.devices.do(onNext: { [unowned self] in self.announced.append($0.info.id) }))
        }

        private func watch(_ stream: DeviceStream) {
            let id = stream.info.id
            changes.append("\(scheduler.now / 1_000_000) + \(id)")
            // Not kept: the subscription ends when the device's stream completes.
            _ = stream.frames.subscribe(onCompleted: { [unowned self] in
                self.changes.append("\(self.scheduler.now / 1_000_000) - \(id)")
            })
        }

        func advance(toMilliseconds t: Int64) { scheduler.advance(to: t * 1_000_000) }

        /// Plays to the end, then disposes everything (on the scheduler).
        func finish() {
            scheduler.run()
            running?.dispose()
            watcher?.dispose()
            scheduler.run()
        }

        func keysDown(_ id: DeviceID) -> Set<String>? {
            store.state(of: id).map { Set($0.keysDown.map { EventNames.codeText(type: EventType.key, code: $0) }) }
        }
    }

    static func session(_ name: String) throws -> Session {
        try SessionReader.read(contentsOf: SessionFixtures.url(name))
    }

    @Test func aDockUnpluggedWhileAKeyIsHeldTakesItsKeysWithIt() throws {
        let session = try Self.session("dock-unplugged-key-held.session")
        let mouse = session.devices[0].info.id, dock = session.devices[1].info.id
        let run = Run(session)
        run.advance(toMilliseconds: 250)
        #expect(run.hub.deviceCount == 1)
        #expect(run.changes == ["0 + \(mouse)"])
        let mouseOnly = LiveResources.owned
        run.advance(toMilliseconds: 2_499)
        #expect(run.hub.deviceCount == 2)
        #expect(run.keysDown(dock) == ["KEY_LEFTCTRL", "KEY_C"], "the dock's recording ends with Ctrl+C held")
        #expect(run.changes == ["0 + \(mouse)", "500 + \(dock)"])
        run.advance(toMilliseconds: 2_500)
        // Unplugged: the device, its slot and its held keys are gone; the watcher saw it go.
        #expect(run.store.state(of: dock) == nil)
        #expect(run.keysDown(dock) == nil)
        #expect(run.hub.deviceCount == 1)
        #expect(run.hub.devices.map(\.id) == [mouse])
        #expect(run.changes == ["0 + \(mouse)", "500 + \(dock)", "2500 - \(dock)"])
        #expect(run.store.state(of: mouse) != nil, "the mouse stays")
        LiveResources.expectOwned(mouseOnly, "the dock's resources went with it")
        run.finish()
        let end = try #require(session.timeline.last).time / 1_000_000
        #expect(run.changes.last == "\(end) - \(mouse)", "the mouse is removed at the session's last time")
        #expect(end > 2_500)
        #expect(run.hub.deviceCount == 0)
        #expect(run.replay.droppedIncompleteEvents == 0)
    }

    @Test func aDeviceThatComesAndGoes100TimesLeavesNothingBehind() throws {
        let session = try Self.session("come-and-go-100.session")
        let id = session.devices[0].info.id
        let run = Run(session)
        var between: [Int] = []
        var framesPerAppearance: [UInt64] = []
        for k in Int64(0)..<100 {
            run.advance(toMilliseconds: k * 100 + 40)
            // A fresh state every time: three frames in, nothing carried over.
            framesPerAppearance.append(run.store.state(of: id)?.counters.framesIn ?? 0)
            run.advance(toMilliseconds: k * 100 + 75)
            #expect(run.hub.deviceCount == 0)
            between.append(LiveResources.owned)
        }
        #expect(framesPerAppearance == Array(repeating: 3, count: 100))
        // Between two appearances the same resources live every time (no leak per plug);
        // after the last one the replay has finished and released its timer slot too.
        #expect(Set(between.dropLast()).count == 1, "resources changed between appearances: \(between)")
        #expect(between.last == between[0] - 1)
        run.finish()
        let expected = (0..<100).flatMap { k in ["\(k * 100) + \(id)", "\(k * 100 + 50) - \(id)"] }
        #expect(run.changes == expected)
        #expect(run.announced == Array(repeating: id, count: 100), "one device: one id every time")
    }

    @Test func twoIdenticalDevicesHaveStableDistinctIdsAndTheirOwnState() throws {
        let session = try Self.session("two-identical-keyboards.session")
        #expect(session.devices[0].info.name == session.devices[1].info.name)
        #expect(session.devices[0].info.inputID == session.devices[1].info.inputID)
        let first = session.devices[0].info.id, second = session.devices[1].info.id
        #expect(first != second)
        var runs: [[String]] = []
        for _ in 0..<2 {
            let run = Run(session)
            run.advance(toMilliseconds: 5_150)
            #expect(run.announced == [first, second])
            #expect(run.keysDown(first) == ["KEY_ENTER"])
            #expect(run.keysDown(second) == ["KEY_ENTER"])
            run.advance(toMilliseconds: 5_500)
            #expect(run.keysDown(first) == ["KEY_ENTER"], "still held on the first")
            #expect(run.keysDown(second) == [], "released on the second only")
            run.advance(toMilliseconds: 6_000)
            #expect(run.keysDown(first) == nil)
            #expect(run.keysDown(second) == [])
            run.finish()
            runs.append(run.changes)
        }
        #expect(runs[0] == ["0 + \(first)", "500 + \(second)", "6000 - \(first)", "6500 - \(second)"])
        #expect(runs[0] == runs[1], "the same ids and times on every replay")
    }

    @Test func sessionsAndPlainRecordingsPlayTogether() throws {
        let session = try Self.session("come-and-go-100.session")
        let plain = try Recording.read(contentsOf: Fixtures.recording(SessionFixtures.ps2MousePath))
        let scheduler = VirtualTimeScheduler()
        // The plain recording's device has the same id: the session's gets #2.
        let replay = ReplaySource(recordings: [plain], sessions: [session], scheduler: scheduler)
        #expect(replay.infos.map(\.id) == [plain.devices[0].info.id,
                                           DeviceID(rawValue: plain.devices[0].info.id.rawValue + "#2")])
        var streams = 0
        let sub = replay.devices.subscribe(onNext: { _ in streams += 1 })
        scheduler.run()
        #expect(streams == 101)
        sub.dispose()
        scheduler.run()
    }
}

/// The committed session fixtures are what `SessionFixtures` writes from the real recordings
/// (so they can be regenerated, and a change in them is seen).
struct SessionFixtureFileTests {
    @Test(arguments: SessionFixtures.all.map(\.name))
    func theCommittedFileIsTheGeneratedOne(_ name: String) throws {
        let make = try #require(SessionFixtures.all.first { $0.name == name }).make
        let session = try make()
        let bytes = SessionWriter.write(session)
        let url = SessionFixtures.url(name)
        if ProcessInfo.processInfo.environment["EVFLOW_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        let committed = try #require(FileManager.default.contents(atPath: url.path),
                                     "missing \(name); run with EVFLOW_UPDATE_GOLDEN=1 (docs/golden.md)")
        #expect(Array(committed) == bytes, "\(name) differs from what SessionFixtures writes")
        #expect(try SessionReader.read(contentsOf: url) == session)
    }
}
