import DeviceStreams
import Dispatch
import Foundation
import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Recording
import Synchronization
import Testing

/// The hub as an operator over device streams: a session lives exactly as long as its device's
/// inner subscription; watchers get the present devices and then each new one, never twice.
@Suite("DeviceHub: one lifetime per device", .ownLiveResources) struct DeviceHubTests {
    static let keyboard = device(name: "Hub keyboard", vendor: 1, product: 1, classes: [.keyboard],
                                 capabilities: [EventType.key: [C.KEY_A, C.KEY_B]])
    static let mouse = device(name: "Hub mouse", vendor: 2, product: 2, classes: [.mouse],
                              capabilities: [EventType.key: [C.BTN_LEFT], EventType.rel: [C.REL_X]])

    /// A hub over a subject of streams, on a virtual clock driven by the test.
    final class Rig {
        let scheduler = VirtualTimeScheduler()
        let devices = PublishSubject<DeviceStream>()
        let hub: DeviceHub
        var running: Disposable?

        init(config: FilterConfig = FilterConfig()) {
            hub = DeviceHub(store: StateStore(), config: config, scheduler: scheduler, latencyClock: .replay)
            running = hub.run(devices.asObservable())
            scheduler.advance(by: .zero)
        }

        @discardableResult
        func plug(_ info: DeviceInfo) -> PublishSubject<InputFrame> {
            let frames = PublishSubject<InputFrame>()
            devices.onNext(DeviceStream(info: info, frames: frames.asObservable()))
            return frames
        }

        func stop() {
            running?.dispose()
            running = nil
            scheduler.run()
        }
    }

    @Test("a session lives as long as the device's frames: their completion takes it out of the store and completes the watchers' streams")
    func sessionIsTheInnerSubscription() {
        let rig = Rig()
        let frames = rig.plug(Self.keyboard)
        #expect(rig.hub.devices.map(\.id) == [Self.keyboard.id])
        var seen: [String] = []
        let watch = rig.hub.streams().subscribe(onNext: { update in
            guard case .present(let present) = update else { return }
            for stream in present {
                _ = stream.frames.subscribe(onNext: { seen.append("frame \($0.events.count)") },
                                            onCompleted: { seen.append("completed") })
            }
        })
        frames.onNext(InputFrame(time: 1, events: [ev(EventType.key, C.KEY_A, 1, at: 1), ev(EventType.syn, 0, 0, at: 1)]))
        frames.onCompleted()
        #expect(rig.hub.devices.isEmpty)
        #expect(rig.hub.store.state(of: Self.keyboard.id) == nil)
        #expect(seen == ["frame 2", "completed"])
        watch.dispose()
        rig.stop()
    }

    @Test("streams(): the devices present when it starts, then each new one — none twice, none missed")
    func snapshotThenAdded() {
        let rig = Rig()
        rig.plug(Self.keyboard)
        var updates: [String] = []
        let watch = rig.hub.streams().subscribe(onNext: { update in
            switch update {
            case .present(let s): updates.append("present \(s.map(\.info.name))")
            case .added(let s): updates.append("added \(s.info.name)")
            }
        })
        let mouseFrames = rig.plug(Self.mouse)
        mouseFrames.onCompleted()
        rig.plug(Self.mouse)
        #expect(updates == ["present [\"Hub keyboard\"]", "added Hub mouse", "added Hub mouse"])
        watch.dispose()
        rig.stop()
    }

    @Test("codes out of range for their type (a key above KEY_MAX, an axis, switch or LED above 63) pass through unchanged and change no state; the frame's other events apply")
    func outOfRangeCodes() {
        let rig = Rig()
        let frames = rig.plug(Self.keyboard)
        var raw: [InputFrame] = []
        let watch = rig.hub.streams(raw: true).subscribe(onNext: { update in
            guard case .present(let present) = update else { return }
            for stream in present { _ = stream.frames.subscribe(onNext: { raw.append($0) }) }
        })
        let hostile = [ev(EventType.key, 0x300, 1, at: 1), ev(EventType.key, 0xFFFF, 1, at: 1),
                       ev(EventType.abs, 0x40, 5, at: 1), ev(EventType.sw, 0x40, 1, at: 1),
                       ev(EventType.led, 0xFFFF, 1, at: 1), ev(0xFFFF, 0xFFFF, -1, at: 1),
                       ev(EventType.key, C.KEY_A, 1, at: 1)]
        frames.onNext(InputFrame(time: 1, events: hostile))
        rig.scheduler.advance(by: .milliseconds(100))
        let state = rig.hub.store.state(of: Self.keyboard.id)
        #expect(state?.keysDown == [C.KEY_A])
        #expect(state?.absolute.isEmpty == true && state?.switchesOn == [] && state?.ledsOn == [])
        #expect(state?.counters.framesIn == 1 && state?.counters.eventsIn == UInt64(hostile.count))
        #expect(raw.map(\.events) == [hostile])
        watch.dispose()
        frames.onCompleted()
        rig.stop()
    }

    /// `id` with the hub's suffix for the `n`th present device of that id.
    static func suffixed(_ id: DeviceID, _ n: Int) -> DeviceID { DeviceID(rawValue: id.rawValue + "#\(n)") }

    @Test("issue #33: two present devices with identical descriptions (two identical uinput keyboards) are both open, under X and X#2, each with its own state; the removal of one leaves the other (the second closed the first's session, which was never reopened)")
    func identicalDevicesBothOpen() {
        let rig = Rig()
        let x = Self.keyboard.id, x2 = Self.suffixed(x, 2)
        var tagged: [DeviceID] = []
        let watch = rig.hub.allFrames().subscribe(onNext: { tagged.append($0.device.id) })
        let first = rig.plug(Self.keyboard)
        let second = rig.plug(Self.keyboard)
        #expect(rig.hub.devices.map(\.id) == [x, x2])
        #expect(rig.hub.deviceCount == 2)
        first.onNext(InputFrame(time: 5, events: [ev(EventType.key, C.KEY_A, 1, at: 5), ev(EventType.syn, 0, 0, at: 5)]))
        second.onNext(InputFrame(time: 6, events: [ev(EventType.key, C.KEY_B, 1, at: 6), ev(EventType.syn, 0, 0, at: 6)]))
        #expect(rig.hub.store.state(of: x)?.keysDown == [C.KEY_A])
        #expect(rig.hub.store.state(of: x2)?.keysDown == [C.KEY_B])
        #expect(tagged == [x, x2], "watchers get each device's frames under its own id")
        first.onCompleted()
        #expect(rig.hub.devices.map(\.id) == [x2], "the first one's removal leaves the second, id unchanged")
        #expect(rig.hub.store.state(of: x2)?.keysDown == [C.KEY_B], "and its state")
        second.onCompleted()
        #expect(rig.hub.deviceCount == 0)
        watch.dispose()
        rig.stop()
    }

    @Test("issue #33: a replay of two identical devices and a live source of two identical devices give the same ids, X and X#2 (one rule: DeviceID.distinct)")
    func replayAndLiveShareTheRule() {
        let recorded = RecordedDevice(info: Self.keyboard, events: [ev(EventType.key, C.KEY_A, 1, at: 1), ev(EventType.syn, 0, 0, at: 1)])
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [Recording(devices: [recorded]), Recording(devices: [recorded])],
                                  scheduler: scheduler, removeAtEnd: false)
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        let running = hub.run(replay.devices)
        scheduler.advance(by: .milliseconds(5))
        let replayed = hub.devices.map(\.id)
        #expect(replay.infos.map(\.id) == replayed, "the hub keeps the replay's ids")
        #expect(replayed.map { hub.store.state(of: $0)?.keysDown } == [[C.KEY_A], [C.KEY_A]])
        running.dispose()
        scheduler.run()

        let live = Rig()
        let frames = [live.plug(Self.keyboard), live.plug(Self.keyboard)]
        #expect(live.hub.devices.map(\.id) == replayed)
        #expect(replayed == [Self.keyboard.id, Self.suffixed(Self.keyboard.id, 2)])
        for f in frames { f.onCompleted() }
        live.stop()
    }

    @Test("ids of re-plugged identical devices are stable: the one re-plugged while its twin stays takes back its own id (the lowest free), X#2 as X#2 and X as X; a third present one gets X#3")
    func replugKeepsTheID() {
        let rig = Rig()
        let x = Self.keyboard.id, x2 = Self.suffixed(x, 2), x3 = Self.suffixed(x, 3)
        let first = rig.plug(Self.keyboard)
        var second = rig.plug(Self.keyboard)
        second.onCompleted()   // X#2 unplugged ...
        #expect(rig.hub.devices.map(\.id) == [x])
        second = rig.plug(Self.keyboard)   // ... and plugged again: X#2 again
        #expect(Set(rig.hub.devices.map(\.id)) == [x, x2])
        first.onCompleted()   // X unplugged while X#2 stays ...
        #expect(rig.hub.devices.map(\.id) == [x2])
        let again = rig.plug(Self.keyboard)   // ... and back: X
        #expect(Set(rig.hub.devices.map(\.id)) == [x, x2])
        let third = rig.plug(Self.keyboard)
        #expect(Set(rig.hub.devices.map(\.id)) == [x, x2, x3])
        for frames in [again, second, third] { frames.onCompleted() }
        #expect(rig.hub.deviceCount == 0)
        rig.stop()
    }

    @Test("issue #25: each identical device's session returns its resources when its own frames end, while the hub runs; the other one's stay")
    func identicalSessionsReleaseTheirOwnResources() {
        let rig = Rig()
        let first = PublishSubject<InputFrame>(), second = PublishSubject<InputFrame>()
        let idle = LiveResources.owned   // the hub running, no device
        rig.devices.onNext(DeviceStream(info: Self.keyboard, frames: first.asObservable()))
        let oneSession = LiveResources.owned - idle
        #expect(oneSession > 0)
        rig.devices.onNext(DeviceStream(info: Self.keyboard, frames: second.asObservable()))
        #expect(rig.hub.deviceCount == 2)
        LiveResources.expectOwned(idle + 2 * oneSession, "two sessions")
        first.onCompleted()
        #expect(rig.hub.deviceCount == 1)
        LiveResources.expectOwned(idle + oneSession, "the first one's resources are gone, the second one's live")
        second.onCompleted()
        #expect(rig.hub.deviceCount == 0)
        LiveResources.expectOwned(idle, "back to the running hub's baseline before it stops")
        rig.stop()
    }

    @Test("an inaccessible device holds its id too: an identical open device that comes while it is listed gets X#2, and X is free again once it ends")
    func inaccessibleDeviceHoldsItsID() {
        let rig = Rig()
        let x = Self.keyboard.id, x2 = Self.suffixed(x, 2)
        let ended = PublishSubject<InputFrame>()
        rig.devices.onNext(DeviceStream(info: Self.keyboard, access: .inaccessible(reason: "Permission denied"),
                                        frames: ended.asObservable()))
        let open = rig.plug(Self.keyboard)
        #expect(rig.hub.inaccessible.map(\.info.id) == [x])
        #expect(rig.hub.devices.map(\.id) == [x2])
        ended.onCompleted()
        let next = rig.plug(Self.keyboard)
        #expect(Set(rig.hub.devices.map(\.id)) == [x, x2])
        open.onCompleted()
        next.onCompleted()
        rig.stop()
    }

    @Test("firstWatcher: once, when the first watcher starts (during its subscription), at once for a later subscriber; not for later watchers")
    func firstWatcherSignalsOnce() {
        let rig = Rig()
        rig.plug(Self.keyboard)
        var log: [String] = []
        let signal = rig.hub.firstWatcher.subscribe(onNext: { log.append("first watcher") })
        #expect(log.isEmpty)
        let watch = rig.hub.streams().subscribe(onNext: { update in
            if case .present(let streams) = update { log.append("present \(streams.count)") }
        })
        #expect(log.sorted() == ["first watcher", "present 1"])
        let second = rig.hub.streams().subscribe(onNext: { _ in })
        var late = 0
        let lateSignal = rig.hub.firstWatcher.subscribe(onNext: { late += 1 })
        #expect(log.count == 2 && late == 1)
        for d in [signal, watch, second, lateSignal] { d.dispose() }
        rig.stop()
    }

    @Test("an inaccessible device is listed while its stream lives and announced to watchers, whose stream ends with it; it leaves no session")
    func inaccessibleStream() {
        let rig = Rig()
        var updates: [String] = []
        let watch = rig.hub.streams().subscribe(onNext: { update in
            if case .added(let s) = update {
                updates.append("\(s.announcement)")
                _ = s.frames.subscribe(onCompleted: { updates.append("ended") })
            }
        })
        let ended = PublishSubject<InputFrame>()
        rig.devices.onNext(DeviceStream(info: Self.mouse, access: .inaccessible(reason: "Permission denied"),
                                        frames: ended.asObservable()))
        #expect(rig.hub.inaccessible.map(\.reason) == ["Permission denied"])
        #expect(rig.hub.deviceCount == 0)
        #expect(updates.count == 1 && updates[0].contains("inaccessible"))
        #expect(updates.count == 1, "the watcher's stream lives while the device does")
        ended.onCompleted()
        #expect(rig.hub.inaccessible.isEmpty)
        #expect(updates.last == "ended", "the watcher's stream ends with the device")
        watch.dispose()
        rig.stop()
    }

    @Test("two identical inaccessible devices are both listed, under X and X#2, and the first one's end leaves the second listed (the list was keyed by device id: the second replaced the first, and the first's end removed the second)")
    func inaccessibleDevicesSharingAnID() {
        let rig = Rig()
        let first = PublishSubject<InputFrame>()
        let second = PublishSubject<InputFrame>()
        rig.devices.onNext(DeviceStream(info: Self.mouse, access: .inaccessible(reason: "first"), frames: first.asObservable()))
        rig.devices.onNext(DeviceStream(info: Self.mouse, access: .inaccessible(reason: "second"), frames: second.asObservable()))
        #expect(rig.hub.inaccessible.map(\.reason) == ["first", "second"])
        #expect(rig.hub.inaccessible.map(\.info.id) == [Self.mouse.id, Self.suffixed(Self.mouse.id, 2)])
        first.onCompleted()
        #expect(rig.hub.inaccessible.map(\.reason) == ["second"])
        second.onCompleted()
        #expect(rig.hub.inaccessible.isEmpty)
        rig.stop()
    }

    @Test("disposing run closes every session on the hub's scheduler, not on the disposing thread")
    func disposalRunsOnTheScheduler() {
        let rig = Rig()
        rig.plug(Self.keyboard)
        rig.plug(Self.mouse)
        rig.running?.dispose()
        #expect(rig.hub.deviceCount == 2, "nothing closed before the scheduler runs")
        rig.scheduler.run()
        #expect(rig.hub.deviceCount == 0)
    }

    @Test("SIGHUP while devices are starting: every device ends up with the last configuration (reload runs on the hub's scheduler, after the starts queued before it)")
    func reloadDuringStarts() throws {
        let short = try FilterConfig.parse(yaml: "version: 1\ndefaults: { keys: 5ms }\n")
        let long = try FilterConfig.parse(yaml: "version: 1\ndefaults: { keys: 40ms }\n")
        let scheduler = SerialDispatchQueueScheduler(label: "test.hub.reload")
        let hub = DeviceHub(store: StateStore(), config: short, scheduler: scheduler, latencyClock: .replay)
        let devices = PublishSubject<DeviceStream>()
        let running = hub.run(devices.asObservable())
        let count = 300
        let starts = DispatchGroup()
        starts.enter()
        DispatchQueue.global().async {
            for i in 0..<count {
                let info = device(name: "Hot-plugged \(i)", vendor: 9, product: UInt16(i), classes: [.keyboard],
                                  capabilities: [EventType.key: [C.KEY_A]])
                scheduler.schedule { devices.onNext(DeviceStream(info: info, frames: .never())) }
            }
            starts.leave()
        }
        // Reloads race the starts from another thread; the last one says "long".
        for i in 0..<50 { hub.reload(i % 2 == 0 ? short : long) }
        starts.wait()
        hub.reload(long)
        scheduler.queue.sync {}
        let expected = long.settings(for: device(name: "x", vendor: 9, product: 0, classes: [.keyboard],
                                                 capabilities: [EventType.key: [C.KEY_A]])).keys[C.KEY_A]
        let settings = hub.devices.map { hub.currentSettings(of: $0.id)?.keys[C.KEY_A] }
        #expect(settings.count == count)
        #expect(settings.allSatisfy { $0 == expected }, "\(settings.filter { $0 != expected }.count) devices on old settings")
        running.dispose()
        scheduler.queue.sync {}
        scheduler.queue.sync {}
        #expect(hub.deviceCount == 0)
    }

    @Test("frames keep flowing while another thread disposes the hub: every store write stays on the hub's thread (the store's writer checks would stop the process otherwise)")
    func foreignDisposalWhileWriting() {
        let scheduler = SerialDispatchQueueScheduler(label: "test.hub.writer")
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        let devices = PublishSubject<DeviceStream>()
        let frames = PublishSubject<InputFrame>()
        let running = hub.run(devices.asObservable())
        scheduler.queue.sync { devices.onNext(DeviceStream(info: Self.mouse, frames: frames.asObservable())) }
        let feeding = Atomic<Bool>(true)
        let fed = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        func feed(_ t: Int64) {
            guard feeding.load(ordering: .relaxed) else {
                done.signal()
                return
            }
            frames.onNext(InputFrame(time: t, events: [ev(EventType.rel, C.REL_X, 1, at: t), ev(EventType.syn, 0, 0, at: t)]))
            fed.add(1, ordering: .relaxed)
            scheduler.schedule { feed(t + 1000) }
        }
        /// Waits (up to 10 s) until `n` frames have been fed: the frames flow, however loaded the machine.
        func waitFed(_ n: Int) -> Bool {
            let deadline = monotonicNow() + 10_000_000_000
            while fed.load(ordering: .relaxed) < n && monotonicNow() < deadline { usleep(1_000) }
            return fed.load(ordering: .relaxed) >= n
        }
        scheduler.schedule { feed(1) }
        #expect(waitFed(100))
        running.dispose()   // from the test's thread
        #expect(waitFed(fed.load(ordering: .relaxed) + 100))   // and keep flowing after it
        feeding.store(false, ordering: .relaxed)
        done.wait()
        scheduler.queue.sync {}
        #expect(hub.deviceCount == 0)
    }
}
