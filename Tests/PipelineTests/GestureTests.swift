import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// The gesture machine's timing (docs/gestures.md), as marble diagrams in virtual time: one
/// character per 10 ms, subscribed at 200 (the diagrams start there). Input: `d` KEY_A down,
/// `u` up, `|` the device's frames end. Output: `p` press, `r` release, `s` single, `D` double,
/// `t` triple, `L` long, `h` hold. Times of the tests: multi-press 30 ms, long 50 ms, hold 20 ms.
@Suite("gestures: the state machine in virtual time", .ownLiveResources)
struct GestureTests {
    static let quick = GestureSettings(codes: [C.KEY_A], multiPress: 30 * ms, long: 50 * ms, hold: 20 * ms)

    static let symbols: [GestureKind: String] = [.press: "p", .release: "r", .single: "s", .double: "D", .triple: "t",
                                                 .long: "L", .hold: "h"]

    struct Run {
        var diagram: String
        var events: [GestureEvent]
        var subscriptions: [Subscription]
    }

    /// Runs `input` through `gestures` and renders what came out; `updates` sends new settings
    /// at the given ticks.
    static func run(_ input: String, _ settings: GestureSettings = quick, disposed: TestTime = 1000,
                    updates: [(TestTime, GestureSettings)] = []) throws -> Run {
        let scheduler = TestScheduler()
        let values: [Character: Int32] = ["d": 1, "u": 0]
        let recorded = try Marbles.parse(input, values: values, start: 200).map { r -> Recorded<Event<InputFrame>> in
            switch r.value {
            case .next(let v): Recorded(time: r.time, value: .next(frame(Int64(r.time), EventType.key, C.KEY_A, v)))
            case .completed: Recorded(time: r.time, value: .completed)
            case .error(let e): Recorded(time: r.time, value: .error(e))
            }
        }
        let frames = scheduler.createHotObservable(recorded)
        let settingsSubject = PublishSubject<GestureSettings>()
        for (t, s) in updates { _ = scheduler.scheduleAt(t) { settingsSubject.onNext(s) } }
        let observer = scheduler.start(disposed: disposed) {
            frames.asObservable().gestures(settings, scheduler: scheduler, settingsUpdates: settingsSubject.asObservable())
        }
        let diagram = Marbles.render(observer.events, start: 200) { symbols[$0.gesture]! }
        return Run(diagram: diagram, events: observer.elements, subscriptions: frames.subscriptions)
    }

    @Test("single: final once the multi-press window passed with no further press")
    func single() throws {
        let r = try Self.run("-d-u----")
        #expect(r.diagram == "-p-r--s")
        #expect(r.events.last == GestureEvent(time: 260 * ms, code: C.KEY_A, gesture: .single, count: 1))
        #expect(r.subscriptions == [Subscription(200, 1000)])
    }

    @Test("double: the second press inside the window; final at the window's end after its release")
    func double() throws {
        let r = try Self.run("-d-u-d-u----")
        #expect(r.diagram == "-p-r-p-r--D")
        #expect(r.events.map(\.count) == [1, 1, 2, 2, 2])
    }

    @Test("triple: final at the third release, without waiting (there is no quadruple)")
    func triple() throws {
        let r = try Self.run("-dudud(u)---")
        #expect(r.diagram == "-prprp(rt)")
    }

    @Test("a fourth quick press starts a new sequence")
    func fourthPress() throws {
        let r = try Self.run("-dududud-u----")
        #expect(r.diagram == "-prprp(rt)p-r--s")
    }

    @Test("a press exactly at the window's end starts a new sequence (the window is half-open)")
    func windowBoundary() throws {
        let r = try Self.run("-du--d-u----")
        #expect(r.diagram == "-pr--(sp)-r--s")
    }

    @Test("long: held for the long time; hold with it, then every hold period; no single after")
    func long() throws {
        let r = try Self.run("-d-------u----")
        #expect(r.diagram == "-p----(Lh)-hr")
        #expect(r.events.filter { $0.gesture == .hold }.map(\.count) == [1, 2])
    }

    @Test("a release exactly at the long time is long (held ≥ T)")
    func longBoundary() throws {
        let r = try Self.run("-d----u----")
        #expect(r.diagram == "-p----(Lhr)")
    }

    @Test("a long press ending a double sequence is long with count 2, and no double or single")
    func longEndsDouble() throws {
        let r = try Self.run("-dud-------u----")
        #expect(r.diagram == "-prp----(Lh)-hr")
        #expect(r.events.first { $0.gesture == .long }?.count == 2)
    }

    @Test("only single: final at the release, no window")
    func onlySingle() throws {
        var s = Self.quick
        s.kinds = [.single]
        let r = try Self.run("-du-du----", s)
        #expect(r.diagram == "--s--s")
    }

    @Test("double without triple: final at the second release")
    func doubleWithoutTriple() throws {
        var s = Self.quick
        s.kinds = [.single, .double]
        let r = try Self.run("-dud(u)----", s)
        #expect(r.diagram == "----D")
    }

    @Test("without long and hold a held press counts as a press")
    func noLong() throws {
        var s = Self.quick
        s.kinds = [.single, .double]
        let r = try Self.run("-d--------u----", s)
        #expect(r.diagram == "-------------s")
    }

    @Test("removal mid-sequence: completion passes at once, the pending single never fires")
    func removalMidSequence() throws {
        let r = try Self.run("-du|")
        #expect(r.diagram == "-pr|")
        #expect(r.subscriptions == [Subscription(200, 230)])
    }

    @Test("removal while held: no long after it")
    func removalWhileHeld() throws {
        let r = try Self.run("-d-|")
        #expect(r.diagram == "-p-|")
    }

    @Test("disposal mid-sequence: nothing fires afterwards")
    func disposalMidSequence() throws {
        let r = try Self.run("-du-----", disposed: 235)
        #expect(r.diagram == "-pr")
        #expect(r.subscriptions == [Subscription(200, 235)])
    }

    @Test("a reload with other settings drops the sequence: no single, and the release of a key down at the reload sends nothing")
    func reloadMidSequence() throws {
        var other = Self.quick
        other.multiPress = 40 * ms
        let dropped = try Self.run("-du-----", updates: [(225, other)])
        #expect(dropped.diagram == "-pr")
        let held = try Self.run("-d-u-du-----", updates: [(225, other)])
        #expect(held.diagram == "-p---pr---s")
    }

    @Test("a reload with the same settings keeps the sequence")
    func reloadSameSettings() throws {
        let r = try Self.run("-du-----", updates: [(225, Self.quick)])
        #expect(r.diagram == "-pr--s")
    }

    @Test("autorepeat (value 2) and keys not configured make nothing")
    func repeatsAndOtherKeys() throws {
        let scheduler = TestScheduler()
        let subject = PublishSubject<InputFrame>()
        var got: [GestureEvent] = []
        let subscription = subject.gestures(Self.quick, scheduler: scheduler).subscribe(onNext: { got.append($0) })
        subject.onNext(frame(0, EventType.key, C.KEY_B, 1))
        subject.onNext(frame(10, EventType.key, C.KEY_A, 1))
        subject.onNext(frame(20, EventType.key, C.KEY_A, 2))
        subject.onNext(frame(30, EventType.key, C.KEY_A, 0))
        scheduler.advanceTo(100)
        #expect(got.map(\.gesture) == [.press, .release, .single])
        subscription.dispose()
    }

    @Test("two keys keep separate sequences; due gestures of one frame come in code order")
    func twoKeys() throws {
        let scheduler = TestScheduler()
        let subject = PublishSubject<InputFrame>()
        var s = Self.quick
        s.codes = [C.KEY_A, C.KEY_B]
        var got: [String] = []
        let subscription = subject.gestures(s, scheduler: scheduler)
            .subscribe(onNext: { got.append("\($0.time / ms) \($0.code == C.KEY_A ? "A" : "B") \($0.gesture.rawValue)") })
        subject.onNext(frame(0, [(EventType.key, C.KEY_B, 1), (EventType.key, C.KEY_A, 1)]))
        subject.onNext(frame(10, [(EventType.key, C.KEY_A, 0), (EventType.key, C.KEY_B, 0)]))
        scheduler.advanceTo(100)
        #expect(got == ["0 B press", "0 A press", "10 A release", "10 B release", "40 A single", "40 B single"])
        subscription.dispose()
    }

    @Test("event time: a frame after the window's end gets the single first, even if the timer has not fired")
    func eventTimeAhead() throws {
        let scheduler = TestScheduler()
        let subject = PublishSubject<InputFrame>()
        var got: [String] = []
        let subscription = subject.gestures(Self.quick, scheduler: scheduler)
            .subscribe(onNext: { got.append("\($0.time / ms) \($0.gesture.rawValue)") })
        // The scheduler stays at 0: a replay faster than recorded.
        subject.onNext(frame(0, EventType.key, C.KEY_A, 1))
        subject.onNext(frame(10, EventType.key, C.KEY_A, 0))
        subject.onNext(frame(100, EventType.key, C.KEY_A, 1))
        #expect(got == ["0 press", "10 release", "40 single", "100 press"])
        subscription.dispose()
    }
}

@Suite("gestures: configuration")
struct GestureConfigTests {
    static func device(_ classes: Set<DeviceClass>, keys: Set<UInt16>) -> DeviceInfo {
        DeviceInfo(name: "pad", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1), classes: classes,
                   capabilities: [EventType.key: keys])
    }

    @Test("the default: a device classed key but not keyboard or pointer gets every key and button; a keyboard none")
    func defaults() {
        let config = FilterConfig()
        let pad = Self.device([.key], keys: [C.KEY_A, C.BTN_LEFT])
        #expect(config.settings(for: pad).gestures.codes == [C.KEY_A, C.BTN_LEFT])
        #expect(config.settings(for: pad).gestures.kinds == Set(GestureKind.allCases))
        #expect(config.settings(for: Self.device([.key, .keyboard], keys: [C.KEY_A])).gestures.isEmpty)
        #expect(config.settings(for: Self.device([.key, .mouse], keys: [C.KEY_A])).gestures.isEmpty)
    }

    @Test("a rule's gestures: keys, gestures and times; off; later rules override")
    func rules() throws {
        let yaml = """
        version: 1
        devices:
          - match: { class: keyboard }
            gestures: { keys: [KEY_A, KEY_Z], gestures: [single, long], multi_press: 250ms, long: 1s, hold: 100ms }
          - match: { name: "off*" }
            gestures: off
        """
        let config = try FilterConfig.parse(yaml: yaml)
        let kb = Self.device([.key, .keyboard], keys: [C.KEY_A, C.KEY_B])
        let g = config.settings(for: kb).gestures
        #expect(g.codes == [C.KEY_A])
        #expect(g.kinds == Set<GestureKind>([.single, .long]))
        #expect(g.multiPress == 250 * ms && g.long == 1000 * ms && g.hold == 100 * ms)
        var off = Self.device([.key], keys: [C.KEY_A])
        off.name = "off pad"
        #expect(config.settings(for: off).gestures.isEmpty)
    }

    @Test("mistakes are refused with the key's path")
    func mistakes() {
        for (bad, says) in [("gestures: { gestures: [quadruple] }", "not a gesture"),
                            ("gestures: { keys: [REL_X] }", "not a key or button name"),
                            ("gestures: { long: 0ms }", "more than 0"),
                            ("gestures: maybe", "expected off, on or a mapping")] {
            let yaml = "version: 1\ndevices:\n  - match: { class: key }\n    \(bad)\n"
            #expect {
                _ = try FilterConfig.parse(yaml: yaml)
            } throws: { error in
                "\(error)".contains(says) && "\(error)".contains("devices[0].gestures")
            }
        }
    }
}
