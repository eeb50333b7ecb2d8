import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Reactive
import Recording
import ReactiveTesting
import Testing

/// Gestures in replay exactly as live (docs/gestures.md, "Replay"): a handmade macro pad
/// replayed through a `DeviceHub` with the default configuration in virtual time makes the
/// gestures of the committed golden file, at every replay speed. The gestures are the hub's
/// own stream (`DeviceStream.gestures`, what `WATCH` `stream: gestures` serves), computed on
/// the filtered frames: the bounce inside the chatter window is no double.
@Suite("Gestures: replay golden", .ownLiveResources) struct GestureReplayTests {
    static let path = "handmade/macro-pad.evemu"

    /// One line per gesture: `<time_ns> <device id> <CODE> <gesture> <count>`.
    static func replay(speed: Double) throws -> String {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(path))
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, speed: speed)
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        var lines: [String] = []
        let watching = hub.streams().flatMap { update -> Observable<(DeviceID, GestureEvent)> in
            switch update {
            case .present(let streams): Observable.merge(streams.map { s in s.gestures.map { (s.info.id, $0) } })
            case .added(let s): s.gestures.map { (s.info.id, $0) }
            }
        }.subscribe(onNext: { id, g in
            lines.append("\(g.time) \(id.rawValue) \(EventNames.codeText(type: EventType.key, code: g.code)) \(g.gesture.rawValue) \(g.count)")
        })
        let running = hub.run(replay.devices)
        scheduler.run()
        #expect(hub.deviceCount == 0, "the device was removed at the end of the replay")
        running.dispose()
        watching.dispose()
        scheduler.run()
        return lines.map { $0 + "\n" }.joined()
    }

    @Test("the macro pad's gestures match the golden file")
    func golden() throws {
        let out = try Self.replay(speed: 1)
        #expect(out.contains(" double 2\n") && out.contains(" triple 3\n") && out.contains(" long 2\n"))
        try GoldenReplayTests.compare(out, golden: "handmade/macro-pad.gestures.txt")
    }

    @Test("replay speed changes nothing: 0.25, 0.5, 3, 50 and as fast as possible give the same gestures",
          arguments: [0.25, 0.5, 3, 50, Double.infinity])
    func speedIndependent(speed: Double) throws {
        #expect(try Self.replay(speed: speed) == Self.replay(speed: 1))
    }

    /// The gesture lines of watchers that subscribe to the hub's streams at the given virtual
    /// times (0: before the replay starts), each with its own subscription.
    static func watch(joining times: [Int64]) throws -> [[String]] {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(path))
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, speed: 1)
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        var lines = Array(repeating: [String](), count: times.count)
        let subscriptions = CompositeDisposable()
        for (i, time) in times.enumerated() {
            _ = scheduler.scheduleAbsolute(time) {
                _ = subscriptions.insert(hub.streams().flatMap { update -> Observable<GestureEvent> in
                    switch update {
                    case .present(let streams): Observable.merge(streams.map(\.gestures))
                    case .added(let s): s.gestures
                    }
                }.subscribe(onNext: { g in
                    lines[i].append("\(g.time) \(EventNames.codeText(type: EventType.key, code: g.code)) \(g.gesture.rawValue) \(g.count)")
                }))
            }
        }
        let running = hub.run(replay.devices)
        scheduler.run()
        running.dispose()
        subscriptions.dispose()
        scheduler.run()
        return lines
    }

    static func after(_ time: Int64, _ lines: [String]) -> [String] {
        lines.filter { Int64($0.prefix { $0 != " " })! > time }
    }

    /// R1 (issue #35 item 6): the hub computed every device's gestures whether or not anybody
    /// watched them, 30 M of R1's 115 M pipeline instructions. Now one recogniser per device runs while
    /// somebody watches, shared by every gesture watcher: one that joins mid-hold sees the
    /// rest of the hold exactly as the first watcher does.
    @Test("a second gestures watcher shares the first one's recogniser: it sees what the first sees from its arrival")
    func aLaterWatcherSharesTheRecogniser() throws {
        let joined: Int64 = 3_100_000_000   // KEY_2 held since 2.5 s, long at 3.0 s
        let lines = try Self.watch(joining: [0, joined])
        #expect(lines[0].count > 20)
        #expect(lines[1] == Self.after(joined, lines[0]))
        #expect(lines[1].first == "3200000000 KEY_2 hold 2")
    }

    /// Nobody watching, nothing is recognised: the first watcher starts from the keys' next
    /// presses, so a key held when it arrives makes no gesture, not even its release
    /// (docs/gestures.md, "Watching").
    @Test("a watcher that comes when nobody watches starts the recogniser: a key already held makes no gesture")
    func aFirstWatcherStartsFromTheNextPress() throws {
        let joined: Int64 = 3_100_000_000
        let all = try Self.watch(joining: [0])[0]
        let late = try Self.watch(joining: [joined])[0]
        let next: Int64 = 4_500_000_000   // KEY_3's first press, the next after the join
        #expect(!late.contains { $0.contains("KEY_2") && Int64($0.prefix { $0 != " " })! < next })
        #expect(late == Self.after(next - 1, all))
    }
}
