import Foundation
import InputModel
import Reactive
import ReactiveTesting
import Testing
@testable import Recording

/// A recording is framed by the live reader's rule (`FrameAssembler`): issue #25, finding 9 —
/// the replay kept a recorded `SYN_DROPPED` inside a frame with the events it had cut short,
/// while the live reader discards them and makes the `SYN_DROPPED` a frame of its own.
@Suite("recorded frames as live", .ownLiveResources)
struct FrameAssemblyTests {
    static let ms: Int64 = 1_000_000

    func ev(_ ms: Int64, _ type: UInt16, _ code: UInt16, _ value: Int32) -> InputEvent {
        InputEvent(time: ms * Self.ms, type: type, code: code, value: value)
    }

    /// What the live reader makes of the same events, fed one by one.
    func live(_ events: [InputEvent]) -> [InputFrame] {
        var assembler = FrameAssembler()
        return events.compactMap { assembler.feed($0) }
    }

    func recording() throws -> Recording {
        try EvemuReader.read(contentsOf: Fixtures.url("handmade/syn-dropped.evemu"))
    }

    @Test("a recorded SYN_DROPPED discards the cut frame and is a frame of its own, as live")
    func recordedDropIsFramedAsLive() throws {
        let device = try recording().devices[0]
        // Times from the file's first event (0.1 s → 0 ms).
        #expect(device.frames().frames == [
            InputFrame(time: 0, events: [ev(0, EventType.msc, 4, 458756), ev(0, EventType.key, 30, 1)]),
            InputFrame(time: 20 * Self.ms, events: [ev(20, EventType.syn, SynCode.dropped, 0)]),
            InputFrame(time: 30 * Self.ms, events: [ev(30, EventType.key, 30, 0), ev(30, EventType.key, 31, 1)]),
            InputFrame(time: 40 * Self.ms, events: [ev(40, EventType.key, 31, 0)]),
        ])
        #expect(device.frames().frames == live(device.events))
        #expect(device.frames().incompleteFrame.isEmpty)
    }

    @Test("SYN_DROPPED first, twice in a row, and before a cut-off end: the table groups as the live assembler")
    func edgeCasesMatchTheLiveAssembler() {
        let drop = { (t: Int64) in self.ev(t, EventType.syn, SynCode.dropped, 0) }
        let report = { (t: Int64) in self.ev(t, EventType.syn, SynCode.report, 0) }
        let cases: [[InputEvent]] = [
            [drop(0), ev(1, EventType.key, 30, 1), report(1)],
            [ev(0, EventType.key, 30, 1), drop(1), drop(2), report(3), report(4)],
            [ev(0, EventType.key, 30, 1), report(0), ev(1, EventType.key, 31, 1), drop(2), ev(3, EventType.key, 31, 0)],
            [ev(0, EventType.abs, 0x35, 1), ev(0, EventType.syn, SynCode.mtReport, 0), drop(1)],
        ]
        for events in cases {
            var assembler = FrameAssembler()
            let frames = events.compactMap { assembler.feed($0) }
            let framed = FramedEvents(grouping: events)
            #expect(framed.frames == frames)
            #expect(framed.incompleteFrame == assembler.pending)
        }
    }

    @Test("replayed, the recording delivers the frames the live reader makes of its events")
    func replayDeliversTheLiveFrames() throws {
        let recording = try recording()
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler)
        var played: [InputFrame] = []
        var completed = false
        let frames = SerialDisposable()
        let devices = replay.devices.subscribe(onNext: { stream in
            frames.disposable = stream.frames.subscribe(onNext: { played.append($0) },
                                                        onCompleted: { completed = true })
        })
        scheduler.run(until: 1_000 * Self.ms)
        #expect(completed)
        #expect(played == live(recording.devices[0].events))
        #expect(played.contains { $0.events == [ev(20, EventType.syn, SynCode.dropped, 0)] })
        devices.dispose()   // the stop is scheduled ...
        frames.dispose()
        scheduler.run()     // ... and runs: a queued stop holds the player (and the scheduler) until then
    }
}
