import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// Rotary steps (docs/gestures.md, "Rotary steps"), as marble diagrams in virtual time: one
/// character per 10 ms, subscribed at 200. Input: `r` one REL_DIAL detent clockwise (+1), `R`
/// three at once (+3), `l` one counter-clockwise (−1), `|` the device's frames end. Output:
/// `>` rotate_right, `<` rotate_left. Step window of the tests: 30 ms.
@Suite("rotary steps: ticks coalesced in virtual time", .ownLiveResources)
struct RotaryStepTests {
    static let dial: UInt16 = 7   // REL_DIAL
    static let knob = GestureSettings(codes: [], rotary: [dial], step: 30 * ms)

    struct Run {
        var diagram: String
        var events: [GestureEvent]
        var subscriptions: [Subscription]
    }

    static func run(_ input: String, _ settings: GestureSettings = knob) throws -> Run {
        let scheduler = TestScheduler()
        let values: [Character: Int32] = ["r": 1, "R": 3, "l": -1]
        let recorded = try Marbles.parse(input, values: values, start: 200).map { r -> Recorded<Event<InputFrame>> in
            switch r.value {
            case .next(let v): Recorded(time: r.time, value: .next(frame(Int64(r.time), EventType.rel, dial, v)))
            case .completed: Recorded(time: r.time, value: .completed)
            case .error(let e): Recorded(time: r.time, value: .error(e))
            }
        }
        let frames = scheduler.createHotObservable(recorded)
        let observer = scheduler.start { frames.asObservable().gestures(settings, scheduler: scheduler) }
        let diagram = Marbles.render(observer.events, start: 200) { $0.gesture == .rotateRight ? ">" : "<" }
        return Run(diagram: diagram, events: observer.elements, subscriptions: frames.subscriptions)
    }

    @Test("one detent: a step at once, count 1, of the EV_REL code")
    func oneDetent() throws {
        let r = try Self.run("-r-----")
        #expect(r.diagram == "->")
        #expect(r.events == [GestureEvent(time: 210 * ms, code: Self.dial, gesture: .rotateRight, count: 1)])
        #expect(r.subscriptions == [Subscription(200, 1000)])
    }

    @Test("a steady turn: the first detent at once, then one step per window with the detents it added up")
    func steadyTurn() throws {
        let r = try Self.run("-rrrrrr------")
        #expect(r.diagram == "->-->-->")
        #expect(r.events.map(\.count) == [1, 2, 3])
    }

    @Test("a tick's value counts its detents (a fast turn reported as +3)")
    func multiDetentTick() throws {
        let r = try Self.run("-Rr------")
        #expect(r.diagram == "->-->")
        #expect(r.events.map(\.count) == [3, 1])
    }

    @Test("a reversal ends the window at once: what was added up, then the new direction's tick, at the same instant")
    func reversal() throws {
        let r = try Self.run("-rrl------")
        #expect(r.diagram == "->-(><)")
        #expect(r.events.map(\.count) == [1, 1, 1])
    }

    @Test("counter-clockwise alone")
    func counterClockwise() throws {
        let r = try Self.run("-ll------")
        #expect(r.diagram == "-<--<")
        #expect(r.events.map(\.count) == [1, 1])
    }

    @Test("a tick exactly at the window's end opens a new window after the step that ends the old one (half-open)")
    func windowBoundary() throws {
        // 210 step; 220 added; 240 = window end: the step of 220, then the tick at 240 adds up
        // in the window that step opened, ending at 270.
        let r = try Self.run("-rr-r------")
        #expect(r.diagram == "->-->-->")
        #expect(r.events.map(\.count) == [1, 1, 1])
    }

    @Test("removal: detents added up in an open window are dropped, nothing after the end")
    func removal() throws {
        let r = try Self.run("-rr|")
        #expect(r.diagram == "->-|")
    }

    @Test("a device without rotary steps configured makes none from REL_DIAL")
    func notConfigured() throws {
        var keysOnly = Self.knob
        keysOnly.kinds.remove(.rotateRight)
        keysOnly.kinds.remove(.rotateLeft)
        let r = try Self.run("-rrl--", keysOnly)
        #expect(r.events.isEmpty)
    }

    @Test("which codes are rotary: REL_DIAL by default (a knob gets gestures without a rule), a wheel only off pointers, rules choose")
    func configuration() throws {
        let knob = device(name: "Knob", classes: [], capabilities: [EventType.key: [0x100], EventType.rel: [Self.dial]])
        let s = FilterConfig().gestureSettings(for: knob)
        #expect(s.rotary == [Self.dial] && s.codes == [0x100])
        #expect(s.described?.rotary == [Self.dial])
        let wheelKnob = device(name: "Volume", classes: [.key], capabilities: [EventType.rel: [8]])
        #expect(FilterConfig().gestureSettings(for: wheelKnob).rotary == [8])
        let mouse = device(name: "Mouse", classes: [.mouse], capabilities: [EventType.key: [0x110], EventType.rel: [0, 1, 8]])
        #expect(FilterConfig().gestureSettings(for: mouse).isEmpty)
        let onMouse = try FilterConfig.parse(yaml: "version: 1\ndevices:\n  - match: { name: Mouse }\n    gestures: on\n")
        #expect(onMouse.gestureSettings(for: mouse).rotary.isEmpty, "a mouse's scroll wheel is no knob")
        let chosen = try FilterConfig.parse(yaml: "version: 1\ndevices:\n  - match: { name: Mouse }\n    gestures: { rotary: [REL_WHEEL], step: 50ms }\n")
        #expect(chosen.gestureSettings(for: mouse).rotary == [8] && chosen.gestureSettings(for: mouse).step == 50 * ms)
        #expect(throws: (any Error).self) {
            try FilterConfig.parse(yaml: "version: 1\ndevices:\n  - match: { name: Mouse }\n    gestures: { rotary: [KEY_A] }\n")
        }
    }
}
