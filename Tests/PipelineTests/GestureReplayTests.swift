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
}
