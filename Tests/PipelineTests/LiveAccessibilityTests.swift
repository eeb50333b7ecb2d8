import DeviceStreams
import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// The live switch of BounceKeys and SlowKeys (`DeviceHub.setAccessibility`, the
/// `ACCESSIBILITY` request): it takes effect on the next key, a key held across the switch is
/// neither dropped nor doubled, and the live value outlives reloads and a re-plug but gives way
/// to `config` (docs/configuration.md, "Switching, reload, removal"; docs/protocol.md).
@Suite("BounceKeys and SlowKeys switched live", .serialized, .ownLiveResources) struct LiveAccessibilityTests {
    typealias Rig = DeviceHubTests.Rig
    static let keyboard = DeviceHubTests.keyboard
    static let mouse = DeviceHubTests.mouse

    /// The keyboard's filtered KEY_A/KEY_B frames as `@ms KEY_A 1`, and the hub's scheduler.
    final class Tap {
        var lines: [String] = []
        var watch: Disposable?

        init(_ hub: DeviceHub) {
            watch = hub.streams().subscribe(onNext: { [weak self] update in
                let streams: [DeviceStream]
                switch update {
                case .present(let s): streams = s
                case .added(let s): streams = [s]
                }
                for s in streams where s.info.id == LiveAccessibilityTests.keyboard.id {
                    _ = s.frames.subscribe(onNext: { [weak self] f in
                        let keys = f.events.filter { $0.type == EventType.key }
                        if !keys.isEmpty { self?.lines.append("@\(f.time / ms) " + keys.map { "\($0.code == C.KEY_A ? "A" : "B")\($0.value)" }.joined(separator: " ")) }
                    })
                }
            })
        }

        func stop() { watch?.dispose() }
    }

    /// Sets the keyboard's filters on the hub's scheduler and returns the status it answered.
    static func set(_ rig: Rig, _ id: DeviceID = keyboard.id, bounce: AccessibilityChange.Value? = nil,
                    slow: AccessibilityChange.Value? = nil) -> AccessibilityStatus?? {
        let got = Box<AccessibilityStatus??>(nil)
        rig.hub.setAccessibility(of: id, AccessibilityChange(bounceKeys: bounce, slowKeys: slow)) { got.value = .some($0) }
        rig.scheduler.advance(by: .zero)
        return got.value
    }

    final class Box<T>: @unchecked Sendable {
        var value: T
        init(_ value: T) { self.value = value }
    }

    static func key(_ frames: PublishSubject<InputFrame>, _ rig: Rig, _ code: UInt16, _ value: Int32, at t: Int64) {
        rig.scheduler.advance(to: t * ms)
        frames.onNext(frame(t, EventType.key, code, value))
    }

    @Test("SlowKeys switched on while a key is held: its release passes once, the next press waits its time")
    func slowOnWhileHeld() throws {
        let rig = Rig()
        let tap = Tap(rig.hub)
        let frames = rig.plug(Self.keyboard)
        Self.key(frames, rig, C.KEY_A, 1, at: 0)
        rig.scheduler.advance(to: 50 * ms)
        let status = try #require(Self.set(rig, slow: .time(200 * ms)) ?? nil)
        #expect(status.settings.slowKeys == 200 * ms && status.slowKeysLive && !status.bounceKeysLive && status.hasKeys)
        #expect(rig.hub.store.state(of: Self.keyboard.id)?.keysDown == [C.KEY_A])   // still down, not dropped
        Self.key(frames, rig, C.KEY_A, 0, at: 100)       // delivered down before: released normally
        Self.key(frames, rig, C.KEY_B, 1, at: 150)       // the next key: held back 200 ms
        Self.key(frames, rig, C.KEY_B, 0, at: 250)       // too short: never happened
        Self.key(frames, rig, C.KEY_A, 1, at: 400)
        Self.key(frames, rig, C.KEY_A, 0, at: 700)
        rig.scheduler.advance(to: 1000 * ms)
        #expect(tap.lines == ["@0 A1", "@100 A0", "@600 A1", "@700 A0"])
        let counters = try #require(rig.hub.store.state(of: Self.keyboard.id)?.counters)
        #expect(counters[.slowKeys].dropped == 1 && counters[.slowKeys].delayed == 1)
        #expect(rig.hub.store.state(of: Self.keyboard.id)?.keysDown == [])
        tap.stop()
        rig.stop()
    }

    @Test("SlowKeys switched off while a press is held back: delivered at the switch, its release once")
    func slowOffWhilePending() throws {
        var config = FilterConfig()
        config.defaults.slowKeys = 300 * ms
        let rig = Rig(config: config)
        let tap = Tap(rig.hub)
        let frames = rig.plug(Self.keyboard)
        Self.key(frames, rig, C.KEY_A, 1, at: 0)
        rig.scheduler.advance(to: 100 * ms)
        #expect(tap.lines.isEmpty)
        let status = try #require(Self.set(rig, slow: .time(0)) ?? nil)
        #expect(status.settings.slowKeys == 0 && status.slowKeysLive)
        // Delivered now, stamped with the filter's last time: the chatter debounce's window
        // end (15 ms) after the press, not the switch's 100 ms.
        #expect(tap.lines == ["@15 A1"])
        #expect(rig.hub.store.state(of: Self.keyboard.id)?.keysDown == [C.KEY_A])
        rig.scheduler.advance(to: 500 * ms)   // the old SlowKeys timer (due at 300) delivers nothing more
        Self.key(frames, rig, C.KEY_A, 0, at: 600)
        Self.key(frames, rig, C.KEY_B, 1, at: 650)   // the next key passes at once
        Self.key(frames, rig, C.KEY_B, 0, at: 700)
        #expect(tap.lines == ["@15 A1", "@600 A0", "@650 B1", "@700 B0"])
        tap.stop()
        rig.stop()
    }

    @Test("BounceKeys switched off with a window open: the next press counts at once")
    func bounceOffWindowOpen() throws {
        let rig = Rig()
        let tap = Tap(rig.hub)
        let frames = rig.plug(Self.keyboard)
        _ = Self.set(rig, bounce: .time(300 * ms))
        Self.key(frames, rig, C.KEY_A, 1, at: 0)
        Self.key(frames, rig, C.KEY_A, 0, at: 50)
        Self.key(frames, rig, C.KEY_A, 1, at: 100)   // inside the window: ignored
        Self.key(frames, rig, C.KEY_A, 0, at: 120)
        let status = try #require(Self.set(rig, bounce: .time(0)) ?? nil)
        #expect(status.settings.bounceKeys == 0)
        Self.key(frames, rig, C.KEY_A, 1, at: 150)   // window (to 350) would still be open: counts
        Self.key(frames, rig, C.KEY_A, 0, at: 170)
        #expect(tap.lines == ["@0 A1", "@50 A0", "@150 A1", "@170 A0"])
        #expect(rig.hub.store.state(of: Self.keyboard.id)?.counters[.bounceKeys].dropped == 1)
        tap.stop()
        rig.stop()
    }

    @Test("BounceKeys switched off while an ignored press is held: its release stays swallowed (no lone release)")
    func bounceOffWhileIgnoredHeld() throws {
        let rig = Rig()
        let tap = Tap(rig.hub)
        let frames = rig.plug(Self.keyboard)
        _ = Self.set(rig, bounce: .time(300 * ms))
        Self.key(frames, rig, C.KEY_A, 1, at: 0)
        Self.key(frames, rig, C.KEY_A, 0, at: 50)
        Self.key(frames, rig, C.KEY_A, 1, at: 100)   // ignored, still held
        _ = Self.set(rig, bounce: .time(0))
        Self.key(frames, rig, C.KEY_A, 0, at: 200)
        Self.key(frames, rig, C.KEY_A, 1, at: 260)   // past the chatter window of the release
        Self.key(frames, rig, C.KEY_A, 0, at: 280)
        #expect(tap.lines == ["@0 A1", "@50 A0", "@260 A1", "@280 A0"])
        tap.stop()
        rig.stop()
    }

    @Test("a live value outlives a reload and a re-plug; 'config' returns to the file's; a read changes nothing")
    func keptAcrossReloadAndReplug() throws {
        var file = FilterConfig()
        file.defaults.bounceKeys = 100 * ms
        let rig = Rig(config: file)
        var frames = rig.plug(Self.keyboard)
        let read = try #require(Self.set(rig) ?? nil)
        #expect(read.settings.bounceKeys == 100 * ms && !read.bounceKeysLive && !read.slowKeysLive)
        _ = Self.set(rig, bounce: .time(400 * ms))
        rig.hub.reload(file)
        let afterReload = try #require(Self.set(rig) ?? nil)
        #expect(afterReload.settings.bounceKeys == 400 * ms && afterReload.bounceKeysLive)

        frames.onCompleted()   // unplugged
        rig.scheduler.advance(by: .zero)
        #expect(Self.set(rig) == .some(nil))   // not present: no status
        frames = rig.plug(Self.keyboard)
        let tap = Tap(rig.hub)
        Self.key(frames, rig, C.KEY_A, 1, at: 1000)
        Self.key(frames, rig, C.KEY_A, 0, at: 1050)
        Self.key(frames, rig, C.KEY_A, 1, at: 1300)   // 250 ms after: inside 400 (the live value), not 100
        Self.key(frames, rig, C.KEY_A, 0, at: 1320)
        #expect(tap.lines == ["@1000 A1", "@1050 A0"])

        let back = try #require(Self.set(rig, bounce: .config) ?? nil)
        #expect(back.settings.bounceKeys == 100 * ms && !back.bounceKeysLive)
        Self.key(frames, rig, C.KEY_A, 1, at: 1350)   // 300 ms after the last delivered release: counts under 100
        #expect(tap.lines == ["@1000 A1", "@1050 A0", "@1350 A1"])
        tap.stop()
        rig.stop()
    }

    @Test("a device without keyboard keys: the status says so and its buttons are never filtered")
    func mouseHasNoKeys() throws {
        let rig = Rig()
        let frames = rig.plug(Self.mouse)
        let status = try #require(Self.set(rig, Self.mouse.id, slow: .time(500 * ms)) ?? nil)
        #expect(!status.hasKeys)
        #expect(status.slowKeysLive)   // kept, does nothing
        #expect(status.settings.slowKeys == 0)   // not in force on a device without keys
        var seen: [Int32] = []
        let watch = rig.hub.streams().subscribe(onNext: { update in
            guard case .present(let s) = update else { return }
            for stream in s { _ = stream.frames.subscribe(onNext: { f in seen += f.events.filter { $0.type == EventType.key }.map(\.value) }) }
        })
        Self.key(frames, rig, C.BTN_LEFT, 1, at: 0)
        Self.key(frames, rig, C.BTN_LEFT, 0, at: 100)
        #expect(seen == [1, 0])
        watch.dispose()
        rig.stop()
    }
}
