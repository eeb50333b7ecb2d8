import DeviceStreams
import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// Suspend and resume in the hub (issue #33, item 5; docs/virtual-device.md, "Suspend and
/// resume"): before sleep every twin releases what it holds, after resume it is set to the
/// keys down on the hardware, and nothing a filter held before the sleep comes out after it.
@Suite("DeviceHub: suspend and resume", .ownLiveResources) struct SleepTests {
    typealias Rig = VirtualOutputTests.Rig
    static let keyboard = VirtualOutputTests.keyboard
    static let plain = device(name: "Plain keyboard", vendor: 9, product: 1, classes: [.keyboard],
                              capabilities: [EventType.key: [C.KEY_A]])
    static let KEY_ENTER = VirtualOutputTests.KEY_ENTER

    /// The report `done` got, after the hub's scheduler ran the job.
    final class Reports: @unchecked Sendable {
        var list: [SleepReport] = []
    }

    static func sleep(_ rig: Rig) -> SleepReport? {
        let reports = Reports()
        rig.hub.prepareForSleep { reports.list.append($0) }
        #expect(reports.list.isEmpty, "scheduled on the hub's scheduler, not run in the caller")
        rig.scheduler.advance(by: .zero)
        return reports.list.first
    }

    static func resume(_ rig: Rig) -> SleepReport? {
        let reports = Reports()
        rig.hub.resumed { reports.list.append($0) }
        rig.scheduler.advance(by: .zero)
        return reports.list.first
    }

    @Test("before sleep: the keys held on a grabbed twin are released (releaseAll: releases + SYN), twin and grab stay; an observed device's port is never called")
    func releaseBeforeSleep() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: VirtualOutputTests.config(.virtual))
            let port = FakeOutputPort(), observedPort = FakeOutputPort(node: "/dev/input/event91")
            let frames = rig.plug(Self.keyboard, port: port)
            let plainFrames = rig.plug(Self.plain, port: observedPort)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1), (EventType.key, C.KEY_B, 1)])
            rig.at(11, plainFrames, [(EventType.key, C.KEY_A, 1)])
            #expect(port.held == [C.KEY_A, C.KEY_B])
            let report = Self.sleep(rig)
            #expect(report?.devices == [Self.keyboard])
            #expect(port.steps == ["createTwin", "grab", "releaseAll [\"KEY_A\", \"KEY_B\"]"])
            #expect(port.held.isEmpty)
            #expect(rig.status(Self.keyboard)?.grab == .grabbed, "the twin and the grab stay through the sleep")
            #expect(observedPort.log.isEmpty, "an observed device is not touched")
            _ = Self.resume(rig)
            #expect(observedPort.log.isEmpty, "not after resume either")
            frames.onCompleted()
            plainFrames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("after resume: the twin is set to the hardware in one frame (KEY_B down now is pressed, the rest released), and the raw key state follows")
    func reconcileAfterResume() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: VirtualOutputTests.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            _ = Self.sleep(rig)
            rig.scheduler.advance(to: 100 * ms)
            port.hardware = [C.KEY_B]   // pressed while the machine woke; its event not read yet
            let report = Self.resume(rig)
            #expect(report?.keysDown == [Self.keyboard.id: [C.KEY_B]])
            #expect(port.written.last.map(describe)
                    == "@100 KEY_ESC 0, KEY_BACKSPACE 0, KEY_ENTER 0, KEY_A 0, KEY_B 1")
            #expect(port.held == [C.KEY_B])
            // The raw state knows KEY_B is down: the panic chord and the grab judge on it. Its
            // release goes out at once (the filter starts afresh: either edge passes first).
            rig.at(150, frames, [(EventType.key, C.KEY_B, 0)])
            #expect(port.written.last.map(describe) == "@150 KEY_B 0")
            #expect(port.held.isEmpty)
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a release the spurious-release debounce held before the sleep does not come out after the resume: it would release KEY_A on the twin while the hardware holds it")
    func staleHeldReleaseIsDropped() {
        let baseline = LiveResources.owned
        do {
            var config = VirtualOutputTests.config(.virtual)
            config.rules[0].spurious = .always
            config.rules[0].spuriousWindow = 50 * ms
            let rig = Rig(config: config)
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            rig.at(100, frames, [(EventType.key, C.KEY_A, 0)])   // held until 150
            _ = Self.sleep(rig)
            rig.scheduler.advance(to: 110 * ms)
            port.hardware = [C.KEY_A]   // pressed again by the time the machine is awake
            _ = Self.resume(rig)
            #expect(port.held == [C.KEY_A])
            rig.scheduler.advance(to: 300 * ms)
            #expect(port.held == [C.KEY_A], "the stale release was written: \(port.written.map(describe))")
            // The physical release, when it comes, goes out.
            rig.at(400, frames, [(EventType.key, C.KEY_A, 0)])
            rig.scheduler.advance(to: 500 * ms)
            #expect(port.held.isEmpty)
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a twin waiting for the grab (Enter held at open) gets nothing after resume and is grabbed when the hardware says nothing is down; with Enter still down it keeps waiting")
    func waitingTwin() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: VirtualOutputTests.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port, atOpen: frame(0, EventType.key, Self.KEY_ENTER, 1))
            #expect(Self.sleep(rig)?.devices == [Self.keyboard])
            port.hardware = [Self.KEY_ENTER]
            _ = Self.resume(rig)
            #expect(rig.status(Self.keyboard)?.grab == .waiting)
            port.hardware = []   // released during the sleep: its release is not read yet
            _ = Self.resume(rig)
            #expect(rig.status(Self.keyboard)?.grab == .grabbed)
            #expect(port.written.isEmpty, "nothing was written to a twin not yet grabbed")
            #expect(port.steps == ["createTwin", "releaseAll []", "grab"])
            // Two resumes, then the grab's look before and after it took effect.
            #expect(port.log.filter { $0 == "keysDown" }.count == 4)
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a device whose keys cannot be read after resume (gone) is reported, and nothing is written to its twin")
    func unreadable() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: VirtualOutputTests.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            _ = Self.sleep(rig)
            port.hardware = nil
            let report = Self.resume(rig)
            #expect(report?.unreadable == [Self.keyboard])
            #expect(report?.keysDown.isEmpty == true)
            #expect(port.written.map(describe) == ["@10 KEY_A 1"])
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }
}
