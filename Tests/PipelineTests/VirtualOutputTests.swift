import DeviceStreams
import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// A `DeviceOutputPort` with no kernel behind it: logs every call in order, tracks the keys
/// held on its "twin" from the frames written, and fails where a test says.
final class FakeOutputPort: DeviceOutputPort, @unchecked Sendable {
    var log: [String] = []
    var written: [InputFrame] = []
    /// When each frame was written, on `now`'s clock.
    var writeTimes: [Int64] = []
    var now: () -> Int64 = { 0 }
    /// Keys down on the twin, from the frames written.
    var held: [UInt16] = []
    var twin = false
    var grabbed = false
    var refusal: String?
    var createError: DeviceOutputError?
    var grabError: DeviceOutputError?
    /// The write with this index (0-based) fails.
    var failWrite: Int?
    let node: String

    init(node: String = "/dev/input/event90") { self.node = node }

    var virtualRefusal: String? { refusal }

    func createTwin() throws(DeviceOutputError) -> String {
        log.append("createTwin")
        if let createError { throw createError }
        twin = true
        return node
    }

    /// When the grab takes effect, on `now`'s clock.
    var grabTimes: [Int64] = []

    /// Runs as the grab takes effect (a test presses a key on the "physical device" there).
    var onGrab: (() -> Void)?

    func grab() throws(DeviceOutputError) -> Int64 {
        log.append("grab")
        if let grabError { throw grabError }
        grabbed = true
        onGrab?()
        grabTimes.append(now())
        return now()
    }

    func write(_ frame: InputFrame) throws(DeviceOutputError) {
        #expect(twin && grabbed, "written without a twin and a grab")
        if failWrite == written.count + log.filter({ $0 == "writeFailed" }).count {
            log.append("writeFailed")
            throw DeviceOutputError(.failed, "libevdev_uinput_write_event: No such device (errno 19)")
        }
        written.append(frame)
        writeTimes.append(now())
        log.append("write \(describe(frame))")
        for e in frame.events where e.type == EventType.key {
            if e.value == 0 { held.removeAll { $0 == e.code } } else if !held.contains(e.code) { held.append(e.code) }
        }
    }

    func releaseAll() {
        log.append("releaseAll \(held.map { EventNames.codeText(type: EventType.key, code: $0) })")
        held = []
    }

    func destroyTwin() {
        log.append("destroyTwin")
        #expect(held.isEmpty, "destroyed with keys held on the twin")
        twin = false
    }

    func ungrab() {
        log.append("ungrab")
        #expect(held.isEmpty, "ungrabbed with keys held on the twin")
        grabbed = false
    }

    /// What `keysDown` answers: the keys down on the "physical device" (nil: unreadable).
    var hardware: Set<UInt16>? = []

    func keysDown() -> Set<UInt16>? {
        log.append("keysDown")
        return hardware
    }

    /// The calls that change something and are not writes (`keysDown` only asks).
    var steps: [String] { log.filter { !$0.hasPrefix("write ") && $0 != "keysDown" } }
}

/// `output: virtual` in the hub: twin first, grab once nothing is held, filtered frames to the
/// twin on the input thread, and every way out releases the twin's keys before destroying it
/// and ungrabbing (issue #21).
@Suite("DeviceHub: virtual output", .ownLiveResources) struct VirtualOutputTests {
    static let keyboard = device(name: "Twin keyboard", vendor: 7, product: 1, classes: [.keyboard],
                                 capabilities: [EventType.key: [C.KEY_A, C.KEY_B, KEY_ENTER, KEY_ESC, KEY_BACKSPACE]])
    static let keyboard2 = device(name: "Twin keyboard two", vendor: 7, product: 2, classes: [.keyboard],
                                  capabilities: [EventType.key: [C.KEY_A, KEY_ENTER]])
    static let mouse = device(name: "Twin mouse", vendor: 8, product: 1, classes: [.mouse],
                              capabilities: [EventType.key: [C.BTN_LEFT], EventType.rel: [C.REL_X, C.REL_Y]])
    static let KEY_ENTER = C.code("KEY_ENTER")
    static let KEY_ESC = C.code("KEY_ESC")
    static let KEY_BACKSPACE = C.code("KEY_BACKSPACE")

    static func config(_ mode: OutputMode, name: String = "Twin*") -> FilterConfig {
        var config = FilterConfig()
        var rule = FilterConfig.Rule(match: .init(name: name))
        rule.output = mode
        config.rules = [rule]
        return config
    }

    final class Rig {
        let scheduler = VirtualTimeScheduler()
        let devices = PublishSubject<DeviceStream>()
        let hub: DeviceHub
        var running: Disposable?
        var notices: [String] = []
        private var noticeSubscription: Disposable?

        init(config: FilterConfig) {
            hub = DeviceHub(store: StateStore(), config: config, scheduler: scheduler, latencyClock: .replay)
            noticeSubscription = hub.outputNotices.subscribe(onNext: { [weak self] n in self?.notices.append(n.message) })
            running = hub.run(devices.asObservable())
            scheduler.advance(by: .zero)
        }

        /// Plugs `info`; `atOpen` is delivered as the first frame, during the subscription
        /// (the keys down when the device was opened).
        @discardableResult
        func plug(_ info: DeviceInfo, port: FakeOutputPort?, atOpen: InputFrame? = nil) -> PublishSubject<InputFrame> {
            let frames = PublishSubject<InputFrame>()
            // The grab's time on the frames' clock: the scheduler's here (virtual time).
            port?.now = { [scheduler] in scheduler.now }
            let source = atOpen.map { frames.asObservable().startWith($0) } ?? frames.asObservable()
            devices.onNext(DeviceStream(info: info, frames: source, output: port))
            return frames
        }

        func at(_ t: Int64, _ frames: PublishSubject<InputFrame>, _ events: [(UInt16, UInt16, Int32)]) {
            scheduler.advance(to: t * ms)
            frames.onNext(frame(t, events))
        }

        func status(_ info: DeviceInfo) -> DeviceOutputStatus? { hub.outputStatus(of: info.id) }

        func stop() {
            running?.dispose()
            running = nil
            noticeSubscription?.dispose()
            scheduler.run()
        }
    }

    @Test("the twin is made at once, the grab waits until the key held at open (the Enter that started the daemon) is released")
    func grabWaitsForRelease() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port, atOpen: frame(0, EventType.key, Self.KEY_ENTER, 1))
            #expect(port.steps == ["createTwin"])
            #expect(rig.status(Self.keyboard) == DeviceOutputStatus(mode: .virtual, virtualNode: "/dev/input/event90", grab: .waiting))
            rig.at(5, frames, [(EventType.key, C.KEY_A, 1)])        // another key joins: still waiting
            rig.at(10, frames, [(EventType.key, Self.KEY_ENTER, 0)])
            #expect(port.steps == ["createTwin"])
            rig.at(20, frames, [(EventType.key, C.KEY_A, 0)])       // nothing held now
            #expect(port.steps == ["createTwin", "grab"])
            #expect(rig.status(Self.keyboard)?.grab == .grabbed)
            // Nothing went to the twin before the grab: the desktop read those from the device,
            // KEY_A's release at 20 ms too (stamped at the grab's time, issue #33).
            rig.scheduler.advance(by: .milliseconds(50))
            #expect(port.written.isEmpty)
            rig.at(100, frames, [(EventType.key, C.KEY_B, 1)])
            rig.at(200, frames, [(EventType.key, C.KEY_B, 0)])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(port.written.map(describe) == ["@100 KEY_B 1", "@200 KEY_B 0"])
            #expect(rig.notices.first?.contains("grabbing once every key and button is released") == true)
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("EBUSY: the journal and the status say another program holds a grab; the twin is released and destroyed, the device stays observed")
    func busyGrab() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            port.grabError = DeviceOutputError(.busy, "libevdev_grab(/dev/input/event3): Device or resource busy (errno 16)")
            let frames = rig.plug(Self.keyboard, port: port)
            #expect(port.steps == ["createTwin", "grab", "releaseAll []", "destroyTwin", "ungrab"])
            #expect(rig.status(Self.keyboard) == DeviceOutputStatus(mode: .virtual, grab: .none,
                                                                    reason: "not grabbed: another program holds a grab (EBUSY)"))
            #expect(rig.notices.last?.contains("another program holds a grab") == true)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            #expect(port.written.isEmpty)
            #expect(rig.hub.store.state(of: Self.keyboard.id)?.keysDown == [C.KEY_A], "still observed")
            frames.onCompleted()
            #expect(port.steps.count == 5, "nothing more to release at removal")
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("the panic chord, held across two grabbed keyboards, checked on the raw frames, releases every grab until the next reload")
    func panicChord() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let one = FakeOutputPort(node: "/dev/input/event90"), two = FakeOutputPort(node: "/dev/input/event91")
            let a = rig.plug(Self.keyboard, port: one)
            let b = rig.plug(Self.keyboard2, port: two)
            #expect(one.steps == ["createTwin", "grab"] && two.steps == ["createTwin", "grab"])
            rig.at(10, a, [(EventType.key, Self.KEY_BACKSPACE, 1)])
            rig.at(12, a, [(EventType.key, Self.KEY_ESC, 1)])
            #expect(one.steps.count == 2, "two of three keys: nothing yet")
            rig.at(14, b, [(EventType.key, Self.KEY_ENTER, 1)])
            // Backspace and Esc had reached the twin (the filter passes presses at once).
            #expect(one.steps == ["createTwin", "grab", "releaseAll [\"KEY_BACKSPACE\", \"KEY_ESC\"]", "destroyTwin", "ungrab"])
            #expect(two.steps == ["createTwin", "grab", "releaseAll []", "destroyTwin", "ungrab"])
            #expect(two.written.isEmpty, "the chord's last press is not written: the grab ended before its filtered frame")
            #expect(rig.status(Self.keyboard)?.reason == "released by the panic chord")
            #expect(rig.status(Self.keyboard2)?.reason == "released by the panic chord")
            rig.at(30, a, [(EventType.key, Self.KEY_BACKSPACE, 0), (EventType.key, Self.KEY_ESC, 0)])
            rig.at(30, b, [(EventType.key, Self.KEY_ENTER, 0)])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(one.steps.count == 5 && two.steps.count == 5, "released until the next reload")
            rig.hub.reload(Self.config(.virtual))
            rig.scheduler.advance(by: .zero)
            #expect(one.steps.suffix(2) == ["createTwin", "grab"] && two.steps.suffix(2) == ["createTwin", "grab"])
            a.onCompleted()
            b.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("the chord's keys on an observed device do not count, and an observed device is never touched")
    func chordNeedsGrabbedDevices() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual, name: "Twin keyboard two"))
            let observed = FakeOutputPort(), grabbed = FakeOutputPort()
            let a = rig.plug(Self.keyboard, port: observed)
            let b = rig.plug(Self.keyboard2, port: grabbed)
            rig.at(10, a, [(EventType.key, Self.KEY_BACKSPACE, 1), (EventType.key, Self.KEY_ESC, 1)])
            rig.at(12, b, [(EventType.key, Self.KEY_ENTER, 1)])
            #expect(observed.log.isEmpty)
            #expect(grabbed.steps == ["createTwin", "grab"])
            #expect(rig.status(Self.keyboard) == .observed)
            a.onCompleted()
            b.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("removal with a key held: releaseAll (the held key), then destroy, then ungrab")
    func removalReleasesFirst() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            frames.onCompleted()
            #expect(port.steps == ["createTwin", "grab", "releaseAll [\"KEY_A\"]", "destroyTwin", "ungrab"])
            #expect(rig.status(Self.keyboard) == nil)
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("shutdown (the hub disposed) with a key held: releaseAll, destroy, ungrab")
    func disposeReleasesFirst() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            rig.stop()
            #expect(port.steps == ["createTwin", "grab", "releaseAll [\"KEY_A\"]", "destroyTwin", "ungrab"])
            _ = frames
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("reload to observe with a key held: releaseAll, destroy, ungrab; the device stays open and observed")
    func reloadToObserve() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            rig.hub.reload(Self.config(.observe))
            rig.scheduler.advance(by: .zero)
            #expect(port.steps == ["createTwin", "grab", "releaseAll [\"KEY_A\"]", "destroyTwin", "ungrab"])
            #expect(rig.status(Self.keyboard) == .observed)
            #expect(rig.hub.devices.map(\.id) == [Self.keyboard.id])
            rig.at(20, frames, [(EventType.key, C.KEY_A, 0)])
            rig.scheduler.advance(by: .milliseconds(100))
            #expect(port.written.count == 1, "nothing written after the reload")
            frames.onCompleted()
            #expect(port.steps.count == 5)
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("reload observe → virtual with a key held: the twin at once, the grab at the release")
    func reloadToVirtual() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.observe))
            let port = FakeOutputPort()
            let frames = rig.plug(Self.keyboard, port: port)
            #expect(port.log.isEmpty)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            rig.hub.reload(Self.config(.virtual))
            rig.scheduler.advance(by: .zero)
            #expect(port.steps == ["createTwin"])
            #expect(rig.status(Self.keyboard)?.grab == .waiting)
            rig.at(50, frames, [(EventType.key, C.KEY_A, 0)])
            #expect(port.steps == ["createTwin", "grab"])
            #expect(rig.status(Self.keyboard)?.grab == .grabbed)
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a write error: counted, then releaseAll, destroy, ungrab; the reason is in the status, the device stays observed")
    func writeError() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            port.failWrite = 1
            let frames = rig.plug(Self.keyboard, port: port)
            rig.at(10, frames, [(EventType.key, C.KEY_A, 1)])
            rig.at(20, frames, [(EventType.key, C.KEY_B, 1)])
            #expect(port.steps == ["createTwin", "grab", "writeFailed", "releaseAll [\"KEY_A\"]", "destroyTwin", "ungrab"])
            #expect(rig.hub.outputCounters(of: Self.keyboard.id) == DeviceOutputCounters(framesWritten: 1, writeErrors: 1))
            #expect(rig.status(Self.keyboard)?.reason?.hasPrefix("not grabbed: writing to the virtual device failed") == true)
            #expect(rig.hub.store.state(of: Self.keyboard.id)?.keysDown == [C.KEY_A, C.KEY_B])
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("the twin cannot be made (no /dev/uinput): the status says why, nothing is grabbed")
    func twinCreationFails() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            port.createError = DeviceOutputError(.failed, "libevdev_uinput_create_from_device(/dev/uinput): Permission denied (errno 13)")
            let frames = rig.plug(Self.keyboard, port: port)
            #expect(!port.log.contains("grab"))
            #expect(rig.status(Self.keyboard)?.reason
                    == "not grabbed: the virtual device could not be created: libevdev_uinput_create_from_device(/dev/uinput): Permission denied (errno 13)")
            frames.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("force feedback: virtual is refused with the port's reason, no twin is made; a replay (no port) stays observed too")
    func refusals() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let port = FakeOutputPort()
            port.refusal = "force feedback cannot be forwarded: access(/dev/input/event9, read and write): Permission denied (errno 13)"
            let pad = rig.plug(Self.keyboard, port: port)
            #expect(port.log.isEmpty)
            #expect(rig.status(Self.keyboard) == DeviceOutputStatus(mode: .virtual, reason: port.refusal))
            let replay = rig.plug(Self.mouse, port: nil)
            #expect(rig.status(Self.mouse)?.grab == DeviceOutputStatus.Grab.none)
            #expect(rig.status(Self.mouse)?.reason?.contains("no kernel device") == true)
            pad.onCompleted()
            replay.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("the twin gets exactly the socket's filtered frames: bounces removed, a debounced release at its deadline, autorepeat (value 2) and every relative motion kept")
    func twinEqualsFilteredStream() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig(config: Self.config(.virtual))
            let keys = FakeOutputPort(node: "/dev/input/event90"), pointer = FakeOutputPort(node: "/dev/input/event91")
            keys.now = { rig.scheduler.now }
            let k = rig.plug(Self.keyboard, port: keys)
            let m = rig.plug(Self.mouse, port: pointer)
            var filtered: [String: [InputFrame]] = [:]
            var filteredTimes: [Int64] = []
            let watch = rig.hub.allFrames().subscribe(onNext: {
                filtered[$0.device.name, default: []].append($0.frame)
                if $0.device.name == Self.keyboard.name { filteredTimes.append(rig.scheduler.now) }
            })
            rig.at(10, k, [(EventType.key, C.KEY_A, 1)])
            rig.at(12, k, [(EventType.key, C.KEY_A, 0)])     // a bounce: gone
            rig.at(14, k, [(EventType.key, C.KEY_A, 1)])
            rig.at(300, k, [(EventType.key, C.KEY_A, 2)])    // autorepeat
            rig.at(333, k, [(EventType.key, C.KEY_A, 2)])
            rig.at(400, k, [(EventType.key, C.KEY_A, 0)])
            rig.at(600, k, [(EventType.key, C.KEY_B, 1)])
            rig.at(605, k, [(EventType.key, C.KEY_B, 0)])    // a short press: its release waits out the window
            for t in Int64(410)..<Int64(430) { rig.at(t, m, [(EventType.rel, C.REL_X, Int32(t % 7) - 3), (EventType.rel, C.REL_Y, 1)]) }
            rig.at(431, m, [(EventType.key, C.BTN_LEFT, 1)])
            rig.at(500, m, [(EventType.key, C.BTN_LEFT, 0)])
            rig.scheduler.advance(by: .seconds(1))
            #expect(keys.written == filtered["Twin keyboard"])
            #expect(pointer.written == filtered["Twin mouse"])
            #expect(keys.written.map(describe)
                    == ["@10 KEY_A 1", "@300 KEY_A 2", "@333 KEY_A 2", "@400 KEY_A 0", "@600 KEY_B 1", "@615 KEY_B 0"])
            // Written when the socket got them: the held release at its deadline (605 + 10 ms).
            #expect(keys.writeTimes == filteredTimes)
            #expect(keys.writeTimes.last == 615 * ms)
            #expect(pointer.written.filter { $0.events.contains { $0.type == EventType.rel } }.count == 20)
            #expect(rig.hub.outputCounters(of: Self.keyboard.id) == DeviceOutputCounters(framesWritten: 6, writeErrors: 0))
            watch.dispose()
            k.onCompleted()
            m.onCompleted()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }
}
