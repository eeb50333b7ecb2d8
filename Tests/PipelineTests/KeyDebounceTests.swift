import DeviceStreams
import InputModel
import Pipeline
import ReactiveTesting
import Recording
import Reactive
import Testing

/// One row of the `KeyDebounce` table in docs/configuration.md (W = 25 ms, S = 12 ms).
struct DebounceRow: Sendable, CustomTestStringConvertible {
    let number: Int
    let state: KeyDebounce.State
    let spuriousOn: Bool
    let mode: SpuriousMode
    let input: KeyDebounce.Input
    let at: Int64
    let emit: Int32?
    let emitAt: Int64
    let dropped: Int
    let next: KeyDebounce.State
    let turnsOn: Bool
    var testDescription: String { "row \(number)" }

    init(_ number: Int, _ state: KeyDebounce.State, _ input: KeyDebounce.Input, at: Int64, emit: Int32? = nil,
         emitAt: Int64? = nil, dropped: Int = 0, next: KeyDebounce.State, spuriousOn: Bool = false,
         mode: SpuriousMode = .auto, turnsOn: Bool = false) {
        self.number = number
        self.state = state
        self.input = input
        self.at = at * ms
        self.emit = emit
        self.emitAt = (emitAt ?? at) * ms
        self.dropped = dropped
        self.next = next
        self.spuriousOn = spuriousOn
        self.mode = mode
        self.turnsOn = turnsOn
    }
}

private let W: Int64 = 25, S: Int64 = 12

/// Every row of the state/transition table, from its state, on the pure machine.
let debounceTable: [DebounceRow] = [
    .init(1, .up, .press, at: 100, emit: 1, next: .downWaiting(until: 125 * ms, pressed: true, lastEdge: 100 * ms)),
    .init(2, .up, .release, at: 100, dropped: 1, next: .up),
    .init(3, .down, .release, at: 100, emit: 0,
          next: .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: nil)),
    .init(4, .down, .release, at: 100, next: .releaseDelayed(until: 112 * ms, releasedAt: 100 * ms), spuriousOn: true),
    .init(5, .down, .press, at: 100, dropped: 1, next: .down),
    .init(6, .downWaiting(until: 125 * ms, pressed: true, lastEdge: 100 * ms), .release, at: 103,
          next: .downWaiting(until: 125 * ms, pressed: false, lastEdge: 103 * ms)),
    .init(7, .downWaiting(until: 125 * ms, pressed: false, lastEdge: 103 * ms), .press, at: 106, dropped: 2,
          next: .downWaiting(until: 125 * ms, pressed: true, lastEdge: 106 * ms)),
    .init(8, .downWaiting(until: 125 * ms, pressed: true, lastEdge: 100 * ms), .press, at: 106, dropped: 1,
          next: .downWaiting(until: 125 * ms, pressed: true, lastEdge: 106 * ms)),
    .init(9, .downWaiting(until: 125 * ms, pressed: true, lastEdge: 106 * ms), .timeout, at: 125, next: .down),
    .init(10, .downWaiting(until: 125 * ms, pressed: false, lastEdge: 110 * ms), .timeout, at: 125, emit: 0,
          next: .upWaiting(until: 135 * ms, pressed: false, releasedAt: 110 * ms, repressAt: nil)),
    .init(11, .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: nil), .press, at: 104,
          next: .upWaiting(until: 125 * ms, pressed: true, releasedAt: 100 * ms, repressAt: 104 * ms)),
    .init(12, .upWaiting(until: 125 * ms, pressed: true, releasedAt: 100 * ms, repressAt: 104 * ms), .release, at: 106,
          dropped: 2, next: .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: 104 * ms)),
    .init(13, .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: nil), .release, at: 106,
          dropped: 1, next: .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: nil)),
    .init(14, .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: 104 * ms), .timeout, at: 125,
          next: .up),
    .init(15, .upWaiting(until: 125 * ms, pressed: true, releasedAt: 100 * ms, repressAt: 104 * ms), .timeout, at: 125,
          dropped: 1, next: .upHeld, turnsOn: true),
    .init(16, .upWaiting(until: 125 * ms, pressed: true, releasedAt: 100 * ms, repressAt: 120 * ms), .timeout, at: 125,
          dropped: 1, next: .upHeld),
    .init(17, .releaseDelayed(until: 112 * ms, releasedAt: 100 * ms), .press, at: 104, dropped: 2,
          next: .downWaiting(until: 129 * ms, pressed: true, lastEdge: 104 * ms), spuriousOn: true),
    .init(18, .releaseDelayed(until: 112 * ms, releasedAt: 100 * ms), .release, at: 104, dropped: 1,
          next: .releaseDelayed(until: 112 * ms, releasedAt: 100 * ms), spuriousOn: true),
    .init(19, .releaseDelayed(until: 112 * ms, releasedAt: 100 * ms), .timeout, at: 112, emit: 0,
          next: .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: nil), spuriousOn: true),
    .init(20, .upHeld, .release, at: 300, dropped: 1,
          next: .upWaiting(until: 325 * ms, pressed: false, releasedAt: 300 * ms, repressAt: nil)),
    .init(21, .upHeld, .press, at: 300, dropped: 1, next: .upHeld),
    .init(24, .initial, .press, at: 100, emit: 1, next: .downWaiting(until: 125 * ms, pressed: true, lastEdge: 100 * ms)),
    .init(25, .initial, .release, at: 100, emit: 0,
          next: .upWaiting(until: 125 * ms, pressed: false, releasedAt: 100 * ms, repressAt: nil)),
    // Variants of rows 10 and 15 that the table's conditions distinguish.
    .init(22, .downWaiting(until: 125 * ms, pressed: false, lastEdge: 100 * ms), .timeout, at: 125, emit: 0, next: .up),
    .init(23, .upWaiting(until: 125 * ms, pressed: true, releasedAt: 100 * ms, repressAt: 104 * ms), .timeout, at: 125,
          dropped: 1, next: .upHeld, mode: .off),
]

@Suite("KeyDebounce: the state machine", .ownLiveResources) struct KeyDebounceTests {
    @Test("every row of the table", arguments: debounceTable)
    func row(_ r: DebounceRow) {
        var machine = KeyDebounce(window: W * ms, spuriousWindow: S * ms, mode: r.mode, state: r.state,
                                  spuriousOn: r.spuriousOn)
        let out = machine.on(r.input, at: r.at)
        #expect(out.emit == r.emit)
        if r.emit != nil { #expect(out.time == r.emitAt) }
        #expect(out.dropped == r.dropped)
        #expect(machine.state == r.next)
        #expect(out.spuriousTurnedOn == r.turnsOn)
        #expect(machine.spuriousOn == (r.spuriousOn || r.turnsOn))
    }

    @Test("the table lists every state and every input")
    func tableCoversEverything() {
        func name(_ s: KeyDebounce.State) -> String { String(describing: s).prefix { $0 != "(" }.description }
        let pairs = Set(debounceTable.map { "\(name($0.state)) \($0.input)" })
        for state in ["initial", "up", "down", "downWaiting", "upWaiting", "releaseDelayed", "upHeld"] {
            for input in ["press", "release"] { #expect(pairs.contains("\(state) \(input)"), "\(state) \(input)") }
        }
        for state in ["downWaiting", "upWaiting", "releaseDelayed"] {
            #expect(pairs.contains("\(state) timeout"), "\(state) timeout")
        }
    }
}

/// The worked examples of docs/configuration.md (W 25 ms, S 12 ms), through `filterNoise`
/// on the virtual clock, for a button, in `auto` mode (fault not seen yet) and `always`.
@Suite("KeyDebounce: worked examples", .ownLiveResources) struct KeyDebounceExampleTests {
    static func button(_ mode: SpuriousMode) -> DeviceFilterSettings {
        settings(EventType.key, C.BTN_LEFT, .chatter(window: 25 * ms, spurious: mode, spuriousWindow: 12 * ms))
    }

    static func clicks(_ values: String) -> Int { values.split(separator: " ").filter { $0.hasPrefix("1@") }.count }

    @Test("worked examples", arguments: [
        // input, auto (first time), always
        ("1@0 0@3 1@6 0@120", "1@0 0@120", "1@0 0@132"),
        ("1@0 0@100 1@103 0@106", "1@0 0@100", "1@0 0@128"),
        ("1@0 0@40", "1@0 0@40", "1@0 0@52"),
        ("1@0 0@10", "1@0 0@25", "1@0 0@25"),
        ("1@0 0@250 1@254 0@278", "1@0 0@250", "1@0 0@279"),      // spurious release: one click
        ("1@0 0@250 1@260 0@290", "1@0 0@250", "1@0 0@302"),      // one click
        ("1@0 0@250 1@300 0@400", "1@0 0@250 1@300 0@400", "1@0 0@262 1@300 0@412"),   // two clicks
        ("1@0 0@80 1@160 0@240", "1@0 0@80 1@160 0@240", "1@0 0@92 1@160 0@252"),    // double-click
        ("1@0 0@5", "1@0 0@25", "1@0 0@25"),                       // a 5 ms tap
    ])
    func example(input: String, auto: String, always: String) {
        let frames = keyFrames(input, code: C.BTN_LEFT)
        let a = runFilter(Self.button(.auto), frames).values(EventType.key, C.BTN_LEFT)
        let b = runFilter(Self.button(.always), frames).values(EventType.key, C.BTN_LEFT)
        #expect(a == auto)
        #expect(b == always)
        #expect(Self.clicks(a) == Self.clicks(auto) && Self.clicks(b) == Self.clicks(auto))
    }

    @Test("the old throttle-latest rule made two clicks of a spurious release; this makes one")
    func spuriousReleaseRegression() {
        // Issue #9: with throttle(25 ms, latest) + distinct, 1@254 came out at 275 as a new press.
        for gap in [4, 8, 12] as [Int64] {
            for hold in [4, 12, 20, 28] as [Int64] {
                let input = "1@0 0@250 1@\(250 + gap) 0@\(250 + gap + hold)"
                for mode in [SpuriousMode.auto, .always] {
                    let out = runFilter(Self.button(mode), keyFrames(input, code: C.BTN_LEFT))
                        .values(EventType.key, C.BTN_LEFT)
                    #expect(Self.clicks(out) == 1, "\(mode) \(input) → \(out)")
                    #expect(out.split(separator: " ").last?.hasPrefix("0@") == true, "\(input) → \(out)")
                }
            }
        }
    }

    @Test("auto: the first spurious release turns the mode on for that code only; later ones keep the release until the real one")
    func autoTurnsOn() {
        var s = Self.button(.auto)
        s.keys[C.BTN_RIGHT] = .chatter(window: 25 * ms, spurious: .auto, spuriousWindow: 12 * ms)
        let left = keyFrames("1@0 0@250 1@254 0@278 1@1000 0@1250 1@1254 0@1278", code: C.BTN_LEFT)
        let right = keyFrames("1@500 0@600", code: C.BTN_RIGHT)
        var turnedOn: [UInt16] = []
        func play() -> [InputFrame] {
            let scheduler = TestScheduler()
            let source = scheduler.createHotObservable((left + right).sorted { $0.time < $1.time }
                .map { Recorded.next(Int($0.time / ms), $0) })
            var out: [InputFrame] = []
            let sub = source.asObservable().filterNoise(s, scheduler: scheduler, onSpurious: { turnedOn.append($0) })
                .subscribe(onNext: { out.append($0) })
            scheduler.start()
            sub.dispose()
            return out
        }
        var run = FilterRun()
        run.frames = play()
        #expect(turnedOn == [C.BTN_LEFT])
        #expect(run.values(EventType.key, C.BTN_LEFT) == "1@0 0@250 1@1000 0@1279")
        #expect(run.values(EventType.key, C.BTN_RIGHT) == "1@500 0@600")   // still at once
    }

    @Test("counters add up: inputs = at once + dropped + delayed + held")
    func countersAddUp() {
        var rng = SplitMix64(seed: 9)
        for mode in [SpuriousMode.auto, .always, .off] {
            var t: Int64 = 0, v: Int32 = 0, text: [String] = []
            for _ in 0..<400 {
                t += Int64(1 + rng.below(40))
                v = 1 - v
                text.append("\(v)@\(t)")
            }
            let input = keyFrames(text.joined(separator: " "), code: C.BTN_LEFT)
            let run = runFilter(Self.button(mode), input)
            let c = run.counters[.keyChatter]
            let out = UInt64(run.frames.reduce(0) { $0 + $1.events.count })
            let atOnce = out - c.delayed
            #expect(atOnce + c.dropped + c.delayed <= UInt64(input.count))
            #expect(UInt64(input.count) - (atOnce + c.dropped + c.delayed) <= 1, "\(mode): at most one held")
            // Output alternates strictly: never two presses in a row (no invented click).
            let values = run.frames.flatMap { $0.events.map(\.value) }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 != $1 })
        }
    }
}

@Suite("KeyDebounce: configuration and the daemon's notice", .ownLiveResources) struct KeyDebounceConfigTests {
    static let mouse = device(name: "Worn mouse", vendor: 0x046d, product: 0xc077, classes: [.mouse],
                              capabilities: [EventType.key: [C.BTN_LEFT, C.BTN_RIGHT, C.KEY_A]])

    @Test("spurious and spurious_window: defaults, rules and per-code mappings")
    func configuration() throws {
        #expect(FilterConfig().settings(for: Self.mouse).keys[C.BTN_LEFT]
                == .chatter(window: 25 * ms, spurious: .auto, spuriousWindow: 12 * ms))
        let config = try FilterConfig.parse(yaml: """
            version: 1
            defaults: { spurious: off, spurious_window: 10ms }
            devices:
              - match: { id: "046d:c077" }
                spurious: always
                codes:
                  BTN_LEFT: { window: 30ms, spurious_window: 15ms }
                  BTN_RIGHT: { spurious: auto }
                  KEY_A: { window: off }
            """)
        let s = config.settings(for: Self.mouse)
        #expect(s.keys[C.BTN_LEFT] == .chatter(window: 30 * ms, spurious: .always, spuriousWindow: 15 * ms))
        #expect(s.keys[C.BTN_RIGHT] == .chatter(window: 25 * ms, spurious: .auto, spuriousWindow: 10 * ms))
        #expect(s.keys[C.KEY_A] == .passthrough)
        let other = device(name: "kbd", classes: [.keyboard], capabilities: [EventType.key: [C.KEY_A]])
        #expect(config.settings(for: other).keys[C.KEY_A] == .chatter(window: 15 * ms, spurious: .off, spuriousWindow: 10 * ms))
        #expect(throws: ConfigError.self) { try FilterConfig.parse(yaml: "defaults: { spurious: sometimes }") }
        do {
            _ = try FilterConfig.parse(yaml: "version: 1\ndefaults:\n  spurious: sometimes\n", file: "f.yaml")
        } catch {
            #expect("\(error)" == "f.yaml:3: defaults.spurious: expected auto, always or off")
        }
    }

    @Test("a replay through the hub: the fault turns the mode on once, with a notice and in spuriousReleaseCodes")
    func hubNotice() {
        var notices: [String] = []
        var codesWhilePresent: [DeviceID: [UInt16]] = [:]
        do {
            let scheduler = TestScheduler()
            let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
            let frames = scheduler.createHotObservable(
                keyFrames("1@0 0@250 1@254 0@278 1@1000 0@1250 1@1254 0@1278", code: C.BTN_LEFT)
                    .map { Recorded.next(Int($0.time / ms) + 1, $0) })
            // The mouse is plugged in at 1 and removed at 2000 (its frames complete).
            let devices = scheduler.createHotObservable([Recorded.next(1, DeviceStream(
                info: Self.mouse, frames: frames.asObservable().takeUntil(scheduler.createHotObservable([Recorded.next(2000, ())]))))])
            let noticeSub = hub.spuriousNotices.subscribe(onNext: {
                notices.append("\($0.device.name) \(EventNames.codeText(type: EventType.key, code: $0.code))")
            })
            let running = hub.run(devices.asObservable())
            scheduler.scheduleAt(1500) { codesWhilePresent = hub.spuriousReleaseCodes }
            scheduler.start()
            #expect(hub.spuriousReleaseCodes.isEmpty, "forgotten when the device goes away")
            running.dispose()
            noticeSub.dispose()
            scheduler.start()   // the hub is disposed on its scheduler
        }
        #expect(notices == ["Worn mouse BTN_LEFT"])
        #expect(codesWhilePresent == [Self.mouse.id: [C.BTN_LEFT]])
    }
}

@Suite("ReplaySource: the end of a replay", .ownLiveResources) struct ReplayEndTests {
    static func play(removeAtEnd: Bool) -> (present: Int, state: DeviceState?, afterStop: Int) {
        let info = KeyDebounceConfigTests.mouse
        var events: [InputEvent] = []
        for (v, t) in [(Int32(1), Int64(0)), (0, 10)] {
            events.append(ev(EventType.key, C.BTN_LEFT, v, at: t))
            events.append(ev(EventType.syn, SynCode.report, 0, at: t))
        }
        let recording = Recording(devices: [RecordedDevice(info: info, events: events)])
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, removeAtEnd: removeAtEnd)
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        let running = hub.run(replay.devices)
        scheduler.run()
        let present = hub.deviceCount, state = hub.store.state(of: info.id)
        running.dispose()
        scheduler.run()
        return (present, state, hub.deviceCount)
    }

    @Test("without --loop a finished replay keeps its device: final state (the release held to 25 ms) and counters")
    func staysPresent() {
        let kept = Self.play(removeAtEnd: false)
        #expect(kept.present == 1)
        #expect(kept.state?.keysDown == [])
        #expect(kept.state?.lastEventTime == 25 * ms)   // the tap's release, delivered at the window's end
        #expect(kept.state?.counters.framesIn == 2)
        #expect(kept.afterStop == 0)
        let removed = Self.play(removeAtEnd: true)
        #expect(removed.present == 0 && removed.state == nil)
    }
}
