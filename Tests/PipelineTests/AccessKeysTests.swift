import DeviceStreams
import InputModel
import Pipeline
import ReactiveTesting
import Reactive
import Testing

/// One row of the BounceKeys/SlowKeys table in docs/configuration.md (B = 300 ms, S = 200 ms;
/// a row may turn either off).
struct AccessRow: Sendable, CustomTestStringConvertible {
    let number: Int
    let state: AccessKey.State
    let input: AccessKey.Input
    let at: Int64
    let bounce: Int64
    let slow: Int64
    let emit: Int32?
    let emitAt: Int64
    let next: AccessKey.State
    let bounceIgnored: Bool
    let slowIgnored: Bool
    let accepted: Bool
    var testDescription: String { "row \(number)" }

    init(_ number: Int, _ state: AccessKey.State, _ input: AccessKey.Input, at: Int64, bounce: Int64 = 300,
         slow: Int64 = 200, emit: Int32? = nil, emitAt: Int64? = nil, next: AccessKey.State,
         bounceIgnored: Bool = false, slowIgnored: Bool = false, accepted: Bool = false) {
        self.number = number
        self.state = state
        self.input = input
        self.at = at * ms
        self.bounce = bounce * ms
        self.slow = slow * ms
        self.emit = emit
        self.emitAt = (emitAt ?? at) * ms
        self.next = next
        self.bounceIgnored = bounceIgnored
        self.slowIgnored = slowIgnored
        self.accepted = accepted
    }
}

/// Every row of the table, from its state, on the pure machine.
let accessTable: [AccessRow] = [
    .init(1, .up(releasedAt: nil), .press, at: 100, next: .pending(pressedAt: 100 * ms, releasedAt: nil, firstRepeat: nil)),
    .init(2, .up(releasedAt: 0), .press, at: 299, next: .ignored(releasedAt: 0), bounceIgnored: true),
    .init(3, .up(releasedAt: 0), .press, at: 300, slow: 0, emit: 1,
          next: .down(acceptedAt: 300 * ms, pressedAt: 300 * ms, firstRepeat: nil)),
    .init(4, .up(releasedAt: 0), .press, at: 100, bounce: 0, slow: 0, emit: 1,
          next: .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil)),
    .init(5, .up(releasedAt: 0), .release, at: 100, emit: 0, next: .up(releasedAt: 100 * ms)),
    .init(6, .up(releasedAt: nil), .repeat, at: 100, emit: 2, next: .up(releasedAt: nil)),
    .init(7, .up(releasedAt: 0), .timeout, at: 100, next: .up(releasedAt: 0)),
    .init(8, .pending(pressedAt: 100 * ms, releasedAt: 0, firstRepeat: nil), .repeat, at: 280,
          next: .pending(pressedAt: 100 * ms, releasedAt: 0, firstRepeat: 280 * ms)),
    .init(9, .pending(pressedAt: 100 * ms, releasedAt: 0, firstRepeat: nil), .press, at: 150,
          next: .pending(pressedAt: 100 * ms, releasedAt: 0, firstRepeat: nil)),
    .init(10, .pending(pressedAt: 100 * ms, releasedAt: 0, firstRepeat: nil), .release, at: 250,
          next: .up(releasedAt: 0), slowIgnored: true),
    .init(11, .pending(pressedAt: 100 * ms, releasedAt: 0, firstRepeat: 280 * ms), .timeout, at: 300, emit: 1,
          next: .down(acceptedAt: 300 * ms, pressedAt: 100 * ms, firstRepeat: 280 * ms), accepted: true),
    .init(12, .down(acceptedAt: 300 * ms, pressedAt: 100 * ms, firstRepeat: nil), .repeat, at: 350,
          next: .down(acceptedAt: 300 * ms, pressedAt: 100 * ms, firstRepeat: 350 * ms)),
    .init(13, .down(acceptedAt: 300 * ms, pressedAt: 100 * ms, firstRepeat: 350 * ms), .repeat, at: 550, emit: 2,
          next: .down(acceptedAt: 300 * ms, pressedAt: 100 * ms, firstRepeat: 350 * ms)),
    .init(14, .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil), .repeat, at: 350, emit: 2,
          next: .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: 350 * ms)),
    .init(15, .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil), .press, at: 150, emit: 1,
          next: .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil)),
    .init(16, .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil), .release, at: 400, emit: 0,
          next: .up(releasedAt: 400 * ms)),
    .init(17, .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil), .timeout, at: 400,
          next: .down(acceptedAt: 100 * ms, pressedAt: 100 * ms, firstRepeat: nil)),
    .init(18, .ignored(releasedAt: 0), .press, at: 150, next: .ignored(releasedAt: 0)),
    .init(19, .ignored(releasedAt: 0), .repeat, at: 150, next: .ignored(releasedAt: 0)),
    .init(20, .ignored(releasedAt: 0), .release, at: 250, next: .up(releasedAt: 0)),
    .init(21, .ignored(releasedAt: 0), .timeout, at: 250, next: .ignored(releasedAt: 0)),
]

@Suite("AccessKey: the BounceKeys/SlowKeys state machine", .ownLiveResources) struct AccessKeyTableTests {
    @Test("every row of the table", arguments: accessTable)
    func row(_ r: AccessRow) {
        var key = AccessKey(state: r.state)
        let out = key.on(r.input, at: r.at, bounce: r.bounce, slow: r.slow)
        #expect(out.emit == r.emit)
        if r.emit != nil { #expect(out.time == r.emitAt) }
        #expect(key.state == r.next)
        #expect(out.bounceIgnored == r.bounceIgnored)
        #expect(out.slowIgnored == r.slowIgnored)
        #expect(out.slowAccepted == r.accepted)
    }

    @Test("the table lists every state and every input")
    func tableCoversEverything() {
        func name(_ s: AccessKey.State) -> String { String(describing: s).prefix { $0 != "(" }.description }
        let pairs = Set(accessTable.map { "\(name($0.state)) \($0.input)" })
        for state in ["up", "pending", "down", "ignored"] {
            for input in ["press", "release", "repeat", "timeout"] {
                #expect(pairs.contains("\(state) \(input)"), "\(state) \(input)")
            }
        }
    }

    @Test("a switch of settings delivers a held press whose time is up, and only that")
    func reconfigure() {
        let pending = AccessKey.State.pending(pressedAt: 100 * ms, releasedAt: nil, firstRepeat: nil)
        var off = AccessKey(state: pending)
        #expect(off.reconfigure(slow: 0, now: 150 * ms).emit == 1)   // SlowKeys off: it counts now
        #expect(off.state == .down(acceptedAt: 150 * ms, pressedAt: 100 * ms, firstRepeat: nil))
        var shorter = AccessKey(state: pending)
        #expect(shorter.reconfigure(slow: 40 * ms, now: 150 * ms).emit == 1)
        var longer = AccessKey(state: pending)
        #expect(longer.reconfigure(slow: 500 * ms, now: 150 * ms).emit == nil)
        #expect(longer.deadline(slow: 500 * ms) == 600 * ms)
        var ignored = AccessKey(state: .ignored(releasedAt: 0))
        #expect(ignored.reconfigure(slow: 0, now: 150 * ms).emit == nil)
        #expect(ignored.state == .ignored(releasedAt: 0))   // its release is still swallowed
    }
}

/// Settings with BounceKeys/SlowKeys (ms) on KEY_A and KEY_LEFTSHIFT, chatter as given.
func accessSettings(bounce: Int64 = 0, slow: Int64 = 0, chatter: Int64 = 0) -> DeviceFilterSettings {
    var s = DeviceFilterSettings()
    if chatter > 0 {
        for code in [C.KEY_A, C.KEY_LEFTSHIFT] { s.keys[code] = .chatter(window: chatter * ms, spurious: .off) }
    }
    s.accessibility = AccessibilitySettings(bounceKeys: bounce * ms, slowKeys: slow * ms)
    return s
}

/// Marble diagrams of KEY_A through `filterNoise` on the virtual clock, one character per
/// 50 ms: `p` press, `r` release, `2` repeat.
@Suite("BounceKeys and SlowKeys: marble diagrams", .ownLiveResources) struct AccessMarbleTests {
    static let values: [Character: Int32] = ["p": 1, "r": 0, "2": 2]
    static let symbols: [Int32: String] = [1: "p", 0: "r", 2: "2"]

    static func run(_ diagram: String, _ settings: DeviceFilterSettings,
                    updates: [(Int, DeviceFilterSettings)] = [], completeAt: Int? = nil) throws -> (String, FilterRun) {
        let frames = try Marbles.parse(diagram, values: values, frame: 50).compactMap { r -> InputFrame? in
            guard case .next(let v) = r.value else { return nil }
            return frame(Int64(r.time), EventType.key, C.KEY_A, v)
        }
        let run = runFilter(settings, frames, completeAt: completeAt, updates: updates)
        let out = run.frames.flatMap { f in f.events.filter { $0.code == C.KEY_A }.map { (f.time, $0.value) } }
            .map { Recorded(time: Int($0.0 / ms), value: Event<Int32>.next($0.1)) }
        return (Marbles.render(out, frame: 50) { symbols[$0]! }, run)
    }

    @Test("BounceKeys 300 ms: the re-press 100 ms after a release is ignored with its release; later ones count",
          arguments: [
              // input                     output
              ("p-r-p-r-----p-r",          "p-r---------p-r"),
              // an ignored press does not restart the window: the third tap is 350 ms after
              // the first release and counts (X would ignore it: its window restarted at 250)
              ("p-r-p-r--p-r",             "p-r------p-r"),
              ("p-r-----p-r",              "p-r-----p-r"),   // 300 ms exactly: not within
          ])
    func bounceKeys(input: String, output: String) throws {
        let (out, run) = try Self.run(input, accessSettings(bounce: 300))
        #expect(out == output)
        #expect(run.counters[.bounceKeys].dropped == UInt64(input.filter { $0 == "p" }.count - output.filter { $0 == "p" }.count))
    }

    @Test("SlowKeys 200 ms: a press counts once held 200 ms, at that time; released earlier it never happened",
          arguments: [
              ("p-r",                      ""),               // 100 ms: never happened
              ("p---r",                    "----(pr)"),        // 200 ms exactly: counts, then ends
              ("p-----r",                  "----p-r"),
              ("p-r-p-------r",            "--------p---r"),   // a short tap, then a long press
          ])
    func slowKeys(input: String, output: String) throws {
        let (out, run) = try Self.run(input, accessSettings(slow: 200))
        #expect(out == output)
        #expect(run.counters[.slowKeys].delayed == UInt64(output.filter { $0 == "p" }.count))
        #expect(run.counters[.slowKeys].dropped == UInt64(input.filter { $0 == "p" }.count - output.filter { $0 == "p" }.count))
    }

    @Test("SlowKeys: repeats start from the accepted press, with the device's own delay")
    func slowKeysRepeats() throws {
        // Pressed at 0, the device repeats from 250 ms every 50 ms; accepted at 300 ms, so its
        // repeats pass from 300 + 250 = 550 ms on, and none before the press.
        let (out, _) = try Self.run("p----2222222222222-r", accessSettings(slow: 300))
        #expect(out == "------p----2222222-r")
    }

    @Test("BounceKeys and SlowKeys together: a press too short for SlowKeys does not restart the bounce window")
    func both() throws {
        // Delivered release at 400; the tap at 700-750 passes BounceKeys (300 ms after it) but
        // is too short for SlowKeys, so it never happened: the press at 800 is measured from
        // 400, not 750, and counts once held 200 ms.
        let (out, run) = try Self.run("p-------r-----prp-----r", accessSettings(bounce: 300, slow: 200))
        #expect(out == "----p---r-----------p-r")
        #expect(run.counters[.bounceKeys].dropped == 0)
        #expect(run.counters[.slowKeys].dropped == 1)
    }

    @Test("BounceKeys first: a re-press inside the window is ignored before SlowKeys times it")
    func bounceBeforeSlow() throws {
        let (out, run) = try Self.run("p-------r-p-r--p-----r", accessSettings(bounce: 300, slow: 200))
        #expect(out == "----p---r----------p-r")
        #expect(run.counters[.bounceKeys].dropped == 1)
        #expect(run.counters[.slowKeys].dropped == 0)
    }

    @Test("the chatter debounce runs first: a bouncing press is one press for SlowKeys")
    func chatterFirst() throws {
        // 1@0 0@3 1@6 (bounce inside the 15 ms window), held to 400 ms.
        let frames = keyFrames("1@0 0@3 1@6 0@400")
        let run = runFilter(accessSettings(slow: 200, chatter: 15), frames)
        #expect(run.values(EventType.key, C.KEY_A) == "1@200 0@400")
        #expect(run.counters[.slowKeys].dropped == 0)
    }

    @Test("SlowKeys switched off mid-press: the held press is delivered at the switch (stamped with the last frame's time), its release later")
    func switchedOffMidPress() throws {
        let (out, run) = try Self.run("p-----r", accessSettings(slow: 400), updates: [(100, accessSettings())])
        #expect(out == "p-----r")
        #expect(run.frames.count == 2)
        #expect(run.counters[.slowKeys].delayed == 1)
    }

    @Test("SlowKeys switched on mid-press: a key already delivered down is released normally")
    func switchedOnMidPress() throws {
        let (out, _) = try Self.run("p-----r", accessSettings(), updates: [(100, accessSettings(slow: 400))])
        #expect(out == "p-----r")
    }

    @Test("a device removed while a press is held: neither the press nor anything else comes out")
    func removedWhilePending() throws {
        let (out, run) = try Self.run("p--", accessSettings(slow: 400), completeAt: 120)
        #expect(out == "")
        #expect(run.stoppedAt == 120)
    }

    @Test("BounceKeys switched off: a press already ignored keeps its release swallowed")
    func bounceOffWhileIgnored() throws {
        let (out, _) = try Self.run("p-r-p---r", accessSettings(bounce: 300), updates: [(250, accessSettings())])
        #expect(out == "p-r")
    }

    @Test("buttons are never filtered, other keys and modifiers are")
    func buttonsPass() {
        var s = accessSettings(slow: 200)
        s.keys[C.BTN_LEFT] = nil
        let frames = [frame(0, EventType.key, C.BTN_LEFT, 1), frame(50, EventType.key, C.BTN_LEFT, 0),
                      frame(100, EventType.key, C.KEY_LEFTSHIFT, 1), frame(150, EventType.key, C.KEY_LEFTSHIFT, 0)]
        let run = runFilter(s, frames)
        #expect(run.values(EventType.key, C.BTN_LEFT) == "1@0 0@50")
        #expect(run.values(EventType.key, C.KEY_LEFTSHIFT) == "")
    }

    @Test("a frame left with only its scan code is dropped whole")
    func scanCodeDropped() {
        let frames = [frame(0, [(EventType.msc, C.MSC_SCAN, 0x70004), (EventType.key, C.KEY_A, 1)]),
                      frame(50, [(EventType.msc, C.MSC_SCAN, 0x70004), (EventType.key, C.KEY_A, 0)])]
        let run = runFilter(accessSettings(slow: 200), frames)
        #expect(run.frames.isEmpty)
        #expect(run.counters.mscDropped == 2)
    }
}
