import InputDevices
import InputModel
import ReactiveTesting
import Testing

@Suite("frame assembly", .ownLiveResources)
struct FrameAssemblerTests {
    func ev(_ t: Int64, _ type: UInt16, _ code: UInt16, _ value: Int32) -> InputEvent {
        InputEvent(time: t, type: type, code: code, value: value)
    }

    func assemble(_ events: [InputEvent]) -> ([InputFrame], FrameAssembler) {
        var a = FrameAssembler()
        return (events.compactMap { a.feed($0) }, a)
    }

    @Test("events up to SYN_REPORT form one frame stamped with the report's time")
    func frames() {
        let (frames, a) = assemble([
            ev(10, EventType.rel, 0, 5), ev(10, EventType.rel, 1, -3), ev(10, 0, SynCode.report, 0),
            ev(20, EventType.key, 0x110, 1), ev(20, 0, SynCode.report, 0),
            ev(30, EventType.key, 0x110, 0),
        ])
        #expect(frames == [
            InputFrame(time: 10, events: [ev(10, EventType.rel, 0, 5), ev(10, EventType.rel, 1, -3)]),
            InputFrame(time: 20, events: [ev(20, EventType.key, 0x110, 1)]),
        ])
        #expect(a.pending == [ev(30, EventType.key, 0x110, 0)])
    }

    @Test("SYN_DROPPED discards the unfinished frame and is delivered as a frame of its own; the resync follows as frames")
    func synDropped() {
        let (frames, a) = assemble([
            ev(10, EventType.key, 30, 1), ev(10, 0, SynCode.report, 0),
            ev(20, EventType.key, 31, 1),                        // lost half of a frame
            ev(25, 0, SynCode.dropped, 0),
            // libevdev's resync: the state differences, then its SYN_REPORT
            ev(40, EventType.key, 30, 0), ev(40, EventType.key, 31, 1), ev(40, 0, SynCode.report, 0),
            ev(50, EventType.key, 31, 0), ev(50, 0, SynCode.report, 0),
        ])
        #expect(frames == [
            InputFrame(time: 10, events: [ev(10, EventType.key, 30, 1)]),
            InputFrame(time: 25, events: [ev(25, 0, SynCode.dropped, 0)]),
            InputFrame(time: 40, events: [ev(40, EventType.key, 30, 0), ev(40, EventType.key, 31, 1)]),
            InputFrame(time: 50, events: [ev(50, EventType.key, 31, 0)]),
        ])
        #expect(a.droppedCount == 1)
        #expect(a.pending.isEmpty)
    }

    @Test("SYN_MT_REPORT stays inside its frame (multitouch protocol A)")
    func mtReport() {
        let (frames, _) = assemble([
            ev(5, EventType.abs, 0x35, 100), ev(5, 0, SynCode.mtReport, 0),
            ev(5, EventType.abs, 0x35, 200), ev(5, 0, SynCode.mtReport, 0), ev(5, 0, SynCode.report, 0),
        ])
        #expect(frames.count == 1)
        #expect(frames[0].events.map(\.code) == [0x35, SynCode.mtReport, 0x35, SynCode.mtReport])
    }

    @Test("an empty report is an empty frame; discardPending forgets an unfinished frame")
    func emptyAndDiscard() {
        var a = FrameAssembler()
        #expect(a.feed(ev(1, 0, SynCode.report, 0)) == InputFrame(time: 1, events: []))
        #expect(a.feed(ev(2, EventType.key, 1, 1)) == nil)
        a.discardPending()
        #expect(a.pending.isEmpty)
        #expect(a.feed(ev(3, 0, SynCode.report, 0)) == InputFrame(time: 3, events: []))
    }

    @Test("a frame kept downstream keeps its events while the next frames reuse the assembler's buffer; pending is empty after a report")
    func keptFrameIsNotOverwritten() {
        var a = FrameAssembler()
        #expect(a.feed(ev(10, EventType.rel, 0, 1)) == nil)
        let first = a.feed(ev(10, 0, SynCode.report, 0))
        #expect(a.pending.isEmpty)
        #expect(a.feed(ev(20, EventType.rel, 0, 2)) == nil)
        #expect(a.pending == [ev(20, EventType.rel, 0, 2)])
        let second = a.feed(ev(20, 0, SynCode.report, 0))
        // Frames not kept: their buffer is reused in place.
        for t in Int64(30)..<40 {
            _ = a.feed(ev(t, EventType.rel, 0, Int32(t)))
            _ = a.feed(ev(t, 0, SynCode.report, 0))
        }
        #expect(first == InputFrame(time: 10, events: [ev(10, EventType.rel, 0, 1)]))
        #expect(second == InputFrame(time: 20, events: [ev(20, EventType.rel, 0, 2)]))
        #expect(FrameAssembler.frames(of: [ev(1, EventType.key, 30, 1), ev(1, 0, SynCode.report, 0)]).incomplete.isEmpty)
        a.discardPending()
        #expect(a.pending.isEmpty)
    }
}
