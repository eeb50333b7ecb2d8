import InputModel
import Reactive
import Testing
@testable import Recording

/// The replay's reused frame buffer (`FrameTable.frame(_:shiftedBy:reusing:)`): a frame as
/// long as the one before is written over the buffer in place, any other through
/// `replaceSubrange`. Either way a frame a subscriber kept must stay as it was played.
@Suite struct ReplayFrameBufferTests {
    static let mouse = DeviceInfo(name: "mouse", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1))

    /// Frames of 2, 2, 2, 1, 3 and 3 events: the in-place path and the other one, alternating.
    static let recorded: [[InputEvent]] = [2, 2, 2, 1, 3, 3].enumerated().map { f, count in
        (0..<count).map { e in InputEvent(time: Int64(f + 1) * 1_000_000, type: EventType.rel, code: UInt16(e), value: Int32(f * 10 + e)) }
    }

    @Test("frames kept by a subscriber are not overwritten when the next frame of the same length is played (the in-place write copies on write)")
    func keptFramesStayAsPlayed() {
        let events = Self.recorded.flatMap { frame in
            frame + [InputEvent(time: frame[0].time, type: EventType.syn, code: SynCode.report, value: 0)]
        }
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [Recording(devices: [RecordedDevice(info: Self.mouse, events: events)])],
                                  scheduler: scheduler)
        var kept: [InputFrame] = []
        let subscription = replay.devices.subscribe(onNext: { stream in
            _ = stream.frames.subscribe(onNext: { kept.append($0) })
        })
        scheduler.run()
        subscription.dispose()
        scheduler.run()
        // Played from a clock at 0, so event times are the recorded ones.
        #expect(kept.map(\.events) == Self.recorded)
        #expect(kept.map(\.time) == Self.recorded.map { $0[0].time })
    }

    @Test("the table's in-place copy gives the same frames as a fresh buffer, with times shifted")
    func inPlaceMatchesFresh() {
        let events = Self.recorded.flatMap { frame in
            frame + [InputEvent(time: frame[0].time, type: EventType.syn, code: SynCode.report, value: 0)]
        }
        let table = FrameTable(grouping: events)
        var buffer: [InputEvent] = []
        for i in table.ends.indices {
            let reused = table.frame(i, shiftedBy: 7, reusing: &buffer)
            let fresh = table.frame(i, shiftedBy: 7)
            #expect(reused == fresh)
            #expect(reused.events.map(\.value) == Self.recorded[i].map(\.value))
            #expect(reused.events.allSatisfy { $0.time == Self.recorded[i][0].time + 7 })
        }
    }

    @Test("the player's one table of every device's frames: device t's frame i is frame firstFrames[t] + i, an empty device in between included")
    func joinedTableKeepsEachDevicesFrames() {
        func events(_ frames: [[InputEvent]]) -> [InputEvent] {
            frames.flatMap { $0 + [InputEvent(time: $0.first?.time ?? 0, type: EventType.syn, code: SynCode.report, value: 0)] }
        }
        let other: [[InputEvent]] = [[InputEvent(time: 5, type: EventType.key, code: 30, value: 1)],
                                     [InputEvent(time: 9, type: EventType.key, code: 30, value: 0)]]
        var cut = events(Self.recorded)
        cut.append(InputEvent(time: 99, type: EventType.rel, code: 0, value: 1))   // after the last report: incomplete
        let tables = [FrameTable(grouping: cut), FrameTable(), FrameTable(grouping: events(other))]
        let joined = FrameTable(joining: tables)
        let first = FrameTable.firstFrames(tables)
        #expect(first == [0, 6, 6])
        #expect(joined.ends.count == 8)
        #expect(joined.incompleteEvents == 1)
        for (t, table) in tables.enumerated() {
            for i in table.ends.indices {
                #expect(joined.frame(first[t] + i, shiftedBy: 3) == table.frame(i, shiftedBy: 3), "device \(t), frame \(i)")
            }
        }
    }
}
