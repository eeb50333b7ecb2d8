import DeviceStreams
import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// The twin stays true to the user's hands (issue #33): around the grab, through a reload
/// inside a release window, and after the kernel dropped events (a resync frame). Driven at
/// the hub with a fake port; time is the scheduler's (the grab's time is read from it too).
@Suite("DeviceHub: the twin's integrity", .ownLiveResources) struct TwinIntegrityTests {
    typealias Rig = VirtualOutputTests.Rig
    static let keyboard = VirtualOutputTests.keyboard
    static let KEY_ENTER = VirtualOutputTests.KEY_ENTER

    static func virtual(keys: Int64? = nil) -> FilterConfig {
        var config = VirtualOutputTests.config(.virtual)
        config.rules[0].keys = keys
        return config
    }

    @Test("issue #33: a key pressed in a frame queued before the grab took effect is never written to the twin, and the grab waits for its release")
    func pressQueuedBeforeTheGrab() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.virtual())
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port, atOpen: frame(0, EventType.key, Self.KEY_ENTER, 1))
            rig.at(10, frames, [(EventType.key, Self.KEY_ENTER, 0)])   // the release that triggers the grab, at 10 ms
            #expect(port.steps == ["createTwin", "grab"])
            // KEY_A's press was already queued (stamped at the grab's time): the desktop read it
            // from the device, and its release would reach evflowd only.
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            #expect(port.steps == ["createTwin", "grab", "releaseAll []", "ungrab"])
            #expect(rig.status(Self.keyboard) == DeviceOutputStatus(mode: .virtual, virtualNode: "/dev/input/event90", grab: .waiting))
            #expect(rig.notices.last?.contains("ungrabbed until every key is released") == true)
            rig.at(60, frames, [(EventType.key, C.KEY_A, 0)])          // the desktop gets it from the device
            #expect(port.steps == ["createTwin", "grab", "releaseAll []", "ungrab", "grab"])
            #expect(port.grabTimes == [10 * ms, 60 * ms])
            rig.at(100, frames, [(EventType.key, C.KEY_B, 1)])
            rig.at(200, frames, [(EventType.key, C.KEY_B, 0)])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(port.written.map(describe) == ["@100 KEY_B 1", "@200 KEY_B 0"], "KEY_A never reached the twin")
            #expect(port.held.isEmpty)
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("torture finding: a key the kernel has down that no frame read has pressed yet (still queued) keeps the grab waiting, until its own release is read")
    func kernelKeyDownBeforeTheGrab() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.virtual())
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port, atOpen: frame(0, EventType.key, Self.KEY_ENTER, 1))
            port.hardware = [C.KEY_A]                                   // KEY_A's press is queued, unread
            rig.at(10, frames, [(EventType.key, Self.KEY_ENTER, 0)])
            #expect(port.steps == ["createTwin"], "no grab while the kernel has KEY_A down")
            #expect(rig.status(Self.keyboard)?.grab == .waiting)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])          // the queued press, read
            port.hardware = []
            rig.at(40, frames, [(EventType.key, C.KEY_A, 0)])          // its release (the desktop saw both)
            #expect(port.steps == ["createTwin", "grab"])
            #expect(port.grabTimes == [40 * ms])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(port.written.isEmpty, "KEY_A never reached the twin")
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("torture finding: a key down just after the grab took effect (pressed before it, where the desktop saw it) ungrabs at once — before its release can go to evflowd alone — and the grab waits for that release")
    func kernelKeyDownJustAfterTheGrab() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.virtual())
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port, atOpen: frame(0, EventType.key, Self.KEY_ENTER, 1))
            port.onGrab = { [weak port] in port?.hardware = [C.KEY_A]; port?.onGrab = nil }
            rig.at(10, frames, [(EventType.key, Self.KEY_ENTER, 0)])
            #expect(port.steps == ["createTwin", "grab", "ungrab"], "ungrabbed before any frame of KEY_A was read")
            #expect(rig.status(Self.keyboard)?.grab == .waiting)
            // KEY_A's frames, read later: its release happened while the device was not grabbed,
            // so the desktop got it from the device; the grab follows.
            port.hardware = []
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            #expect(port.steps == ["createTwin", "grab", "ungrab"], "KEY_A is held: no grab yet")
            rig.at(30, frames, [(EventType.key, C.KEY_A, 0)])
            #expect(port.steps == ["createTwin", "grab", "ungrab", "grab"])
            rig.at(100, frames, [(EventType.key, C.KEY_B, 1)])
            rig.at(200, frames, [(EventType.key, C.KEY_B, 0)])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(port.written.map(describe) == ["@100 KEY_B 1", "@200 KEY_B 0"], "KEY_A never reached the twin")
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a release queued before the grab is not written either; a press stamped after the grab is")
    func framesAroundTheGrab() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.virtual())
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port, atOpen: frame(0, EventType.key, Self.KEY_ENTER, 1))
            rig.at(10, frames, [(EventType.key, Self.KEY_ENTER, 0)])
            rig.scheduler.advance(by: .milliseconds(50))
            // Enter's press and release were the desktop's, from the device. The debounce held
            // Enter's release (inside the 15-ms window after the press at open) and lets it out
            // at 15 ms, after the grab: written, and ignored by the kernel (the twin never had
            // Enter down), as docs/virtual-device.md says.
            #expect(port.written.map(describe) == ["@15 KEY_ENTER 0"])
            #expect(port.held.isEmpty)
            rig.at(70, frames, [(EventType.key, C.KEY_A, 1)])
            #expect(port.written.map(describe) == ["@15 KEY_ENTER 0", "@70 KEY_A 1"])
            #expect(rig.status(Self.keyboard)?.grab == .grabbed)
            rig.at(90, frames, [(EventType.key, C.KEY_A, 0)])
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("issue #33: a reload that changes the keys' window inside a release window delivers the held release to the twin, STATE and watchers; counted as delayed")
    func reloadInsideAReleaseWindow() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.virtual())
            let port = FakeOutputPort()
            var watched: [String] = []
            let watch = rig.hub.allFrames().subscribe(onNext: { watched.append(describe($0.frame)) })
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(100, frames, [(EventType.key, C.KEY_A, 1)])
            rig.at(105, frames, [(EventType.key, C.KEY_A, 0)])   // inside the 15-ms window: held
            #expect(port.held == [C.KEY_A])
            rig.hub.reload(Self.virtual(keys: 40 * ms))
            rig.scheduler.advance(by: .zero)
            #expect(port.written.map(describe) == ["@100 KEY_A 1", "@105 KEY_A 0"])
            #expect(port.held.isEmpty, "no key left down on the twin")
            #expect(rig.hub.store.state(of: Self.keyboard.id)?.keysDown == [], "nor in STATE")
            #expect(watched == ["@100 KEY_A 1", "@105 KEY_A 0"], "nor for watchers")
            let counters = rig.hub.store.state(of: Self.keyboard.id)?.counters
            #expect(counters?[.keyChatter] == FilterCounts(dropped: 0, delayed: 1))
            // The new 40-ms window runs from what was delivered: a bounce after the next press is swallowed.
            rig.at(300, frames, [(EventType.key, C.KEY_A, 1)])
            rig.at(310, frames, [(EventType.key, C.KEY_A, 0)])
            rig.at(330, frames, [(EventType.key, C.KEY_A, 1)])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(port.written.map(describe).suffix(1) == ["@300 KEY_A 1"])
            #expect(port.held == [C.KEY_A])
            watch.dispose()
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("issue #33: a resync frame (SYN_DROPPED, then the device's state) on a grabbed device: the twin gets exactly the state; a release the filter held for a key the resync says is down is never delivered")
    func resyncOnAGrabbedDevice() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.virtual())
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(100, frames, [(EventType.key, C.KEY_A, 1)])
            rig.at(110, frames, [(EventType.key, C.KEY_B, 1)])
            rig.at(111, frames, [(EventType.key, C.KEY_B, 0)])   // held: inside B's window
            // The kernel lost events: A was released and B pressed again during the gap, Enter pressed.
            rig.scheduler.advance(to: 112 * ms)
            frames.onNext(.resync(dropped: ev(EventType.syn, SynCode.dropped, 0, at: 112),
                                  state: [ev(EventType.key, C.KEY_A, 0, at: 112), ev(EventType.key, C.KEY_B, 1, at: 112),
                                          ev(EventType.key, Self.KEY_ENTER, 1, at: 112)],
                                  time: 112 * ms))
            rig.scheduler.advance(by: .milliseconds(200))
            #expect(port.written.map(describe) == ["@100 KEY_A 1", "@110 KEY_B 1", "@112 KEY_A 0, KEY_B 1, KEY_ENTER 1"],
                    "B's held release is never delivered: the device says B is down")
            #expect(Set(port.held) == [C.KEY_B, Self.KEY_ENTER])
            #expect(Set(rig.hub.store.state(of: Self.keyboard.id)?.keysDown ?? []) == [C.KEY_B, Self.KEY_ENTER])
            let counters = rig.hub.store.state(of: Self.keyboard.id)?.counters
            #expect(counters?.synDropped == 1)
            #expect(counters?[.keyChatter].dropped == 1, "B's held release, superseded by the resync")
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }
}
