import Foundation
import InputModel
import Pipeline
import ReactiveTesting
import Testing

/// Issue #25: nothing a configuration file holds can crash or stall evflowd. Every number a
/// rate, window or timeout can take is refused with a ConfigError naming file, line and key,
/// or gives a well-defined value; only regular files are read.
@Suite("configuration: hostile input (issue #25)", .ownLiveResources) struct ConfigHostileInputTests {
    static func refusal(_ yaml: String) -> ConfigError? {
        do {
            _ = try FilterConfig.parse(yaml: yaml, file: "hostile.yaml")
            return nil
        } catch {
            return error
        }
    }

    /// Finding 1: `max_rate: 0.0000000000001` and `1e-320` trapped ("Double value cannot be
    /// converted to Int64") in --check-config and, on SIGHUP, in the running daemon.
    @Test("rates that trapped, and every other out-of-range rate, are refused naming file, line and key", arguments: [
        "0.0000000000001", "1e-320", "4.9e-324", "0.0000009", "1e300", "1000001", "-1", "-0", "0",
        "nan", "NaN", "-nan", "inf", "-inf", "infinity", "0x1p-1074", "1e", ".", "", "1e309", "125 Hz",
    ])
    func badRates(value: String) {
        for (yaml, line, key) in [
            ("version: 1\ndefaults:\n  abs: { max_rate: \(value) }\n", 3, "defaults.abs.max_rate"),
            ("version: 1\ndefaults:\n  rel:\n    max_rate: \"\(value)\"\n", 4, "defaults.rel.max_rate"),
            ("devices:\n  - match: { class: mouse }\n    codes:\n      REL_WHEEL: { max_rate: \"\(value)hz\" }\n", 4,
             "devices[0].codes.REL_WHEEL.max_rate"),
        ] {
            let error = Self.refusal(yaml)
            #expect(error?.file == "hostile.yaml", "\(yaml)")
            #expect(error?.line == line, "\(yaml)")
            #expect(error?.key == key, "\(yaml)")
            #expect(error?.reason.hasPrefix("bad rate") == true, "\(String(describing: error))")
        }
    }

    @Test("the rate range's ends give well-defined intervals")
    func rateRange() throws {
        func interval(_ v: String) throws -> Int64 {
            try FilterConfig.parse(yaml: "defaults: { abs: { max_rate: \(v) } }").defaults.absMinInterval
        }
        #expect(try interval("0.000001") == FilterConfig.maxIntervalNanoseconds)
        #expect(try interval("1000000") == 1_000)
        #expect(try interval("1e6Hz") == 1_000)
        #expect(try interval("3") == 333_333_333)
        #expect(try interval("off") == 0)
    }

    @Test("windows and timeouts: NaN, infinities, negative, too small to be a nanosecond or too large are refused",
          arguments: ["nan", "inf", "-inf", "-1ms", "-0.5", "1e-320ms", "0.4ns", "1e-9ms", "1000001s", "1e300",
                      "1e309ms", "0x10ms", "nanms", "infs", "ms", "s", "1e15s"])
    func badDurations(value: String) {
        for (yaml, line, key) in [
            ("defaults:\n  keys: \"\(value)\"\n", 2, "defaults.keys"),
            ("defaults:\n  spurious_window: \"\(value)\"\n", 2, "defaults.spurious_window"),
            ("devices:\n  - match: { class: keyboard }\n    codes:\n      KEY_A: { window: \"\(value)\" }\n", 4,
             "devices[0].codes.KEY_A.window"),
            ("devices:\n  - match: { class: switch }\n    codes:\n      SW_LID: \"\(value)\"\n", 4, "devices[0].codes.SW_LID"),
        ] {
            let error = Self.refusal(yaml)
            #expect(error?.line == line && error?.key == key, "\(yaml) → \(String(describing: error))")
            #expect(error?.reason.contains("duration") == true, "\(String(describing: error))")
        }
    }

    @Test("the duration range's ends give well-defined windows")
    func durationRange() throws {
        func keys(_ v: String) throws -> Int64 { try FilterConfig.parse(yaml: "defaults: { keys: \"\(v)\" }").defaults.keys }
        #expect(try keys("1ns") == 1)
        #expect(try keys("1.9ns") == 1)   // the fraction of a nanosecond is dropped, as before
        #expect(Self.refusal("defaults: { keys: 0.6ns }\n")?.key == "defaults.keys")   // not silently "off"
        #expect(try keys("1000000s") == FilterConfig.maxIntervalNanoseconds)
        #expect(try keys("1e9") == FilterConfig.maxIntervalNanoseconds)   // a bare number is milliseconds
        #expect(try keys("0") == 0 && keys("0ms") == 0 && keys("off") == 0)
        #expect(try keys("+25ms") == 25_000_000)
    }

    /// Finding 8: the config took `EV_KEY:0xffff`, which the protocol refuses.
    @Test("a numeric code above its type's largest is refused; the largest is accepted")
    func codeAboveTheTypeMaximum() throws {
        let yaml = { (code: String) in "devices:\n  - match: { class: keyboard }\n    codes:\n      \(code): 20ms\n" }
        let error = Self.refusal(yaml("EV_KEY:0xffff"))
        #expect(error?.line == 4 && error?.key == "devices[0].codes.EV_KEY:0xffff")
        #expect(error?.reason == "no such EV_KEY code (its largest is \(EventNames.codeText(type: EventType.key, code: 0x2ff)))")
        #expect(Self.refusal(yaml("EV_SW:0x11"))?.reason.hasPrefix("no such EV_SW code") == true)
        let config = try FilterConfig.parse(yaml: yaml("EV_KEY:0x2ff"))
        #expect(config.rules[0].codes[.init(type: EventType.key, code: 0x2ff)] == .window(20_000_000))
    }

    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-config-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Findings 4 and 5: a FIFO hung `--check-config` and a SIGHUP reload in open(); a
    /// directory was "configuration OK" and reloaded as the built-in defaults.
    @Test("a FIFO, a directory or a device at the config path is refused at once, naming the path")
    func notRegularFiles() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("f.yaml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [(fifo, "a FIFO (named pipe)"), (dir.path, "a directory"), ("/dev/null", "a character device")] {
            do {
                _ = try FilterConfig.load(path: path)
                Issue.record("\(path) was read as a configuration")
            } catch {
                #expect(error.file == path && error.line == nil)
                #expect(error.description == "\(path): \(kind), not a regular file")
            }
        }
    }

    @Test("a file over 1 MiB is refused, naming the limit")
    func tooLarge() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("big.yaml")
        try Data(repeating: UInt8(ascii: "#"), count: FilterConfig.maxFileBytes + 1).write(to: file)
        #expect(throws: ConfigError(file: file.path, line: nil, key: "",
                                    reason: "larger than the 1 MiB limit for a configuration file")) {
            try FilterConfig.load(path: file.path)
        }
    }

    /// The keys added since issue #25 (the wheel filter, BounceKeys/SlowKeys, gestures and
    /// rotary steps) take the same hostile durations: each is refused with a ConfigError naming
    /// file, line and key — never a trap, never a silent default.
    @Test("wheel, bounce_keys, slow_keys and the gestures' times refuse hostile durations naming file, line and key",
          arguments: ["nan", "inf", "-inf", "-1ms", "-0.5", "1e-320ms", "0.4ns", "1e-9ms", "1000001s", "1e300",
                      "1e309ms", "0x10ms", "nanms", "infs", "ms", "s", "1e15s", "99999999999999999999999", "[1]", "{a: 1}"])
    func badDurationsOfNewerKeys(value: String) {
        var cases: [(String, Int, String)] = [
            ("defaults:\n  wheel: \(value)\n", 2, "defaults.wheel"),
            ("defaults:\n  bounce_keys: \(value)\n", 2, "defaults.bounce_keys"),
            ("defaults:\n  slow_keys: \(value)\n", 2, "defaults.slow_keys"),
            ("devices:\n  - match: { class: keyboard }\n    slow_keys: \(value)\n", 3, "devices[0].slow_keys"),
        ]
        for field in ["multi_press", "long", "hold", "step"] {
            cases.append(("devices:\n  - match: { class: keyboard }\n    gestures:\n      \(field): \(value)\n", 4,
                          "devices[0].gestures.\(field)"))
        }
        for (yaml, line, key) in cases {
            let error = Self.refusal(yaml)
            #expect(error != nil, "accepted: \(yaml)")
            #expect(error?.file == "hostile.yaml", "\(yaml)")
            #expect(error?.line == line, "\(yaml): \(String(describing: error))")
            #expect(error?.key == key, "\(yaml): \(String(describing: error))")
        }
    }

    /// Names and lists: unknown gestures, codes that are no key or no relative axis, a
    /// non-list; each refused naming its key, down to the list item.
    @Test("gestures: unknown gesture names, wrong code kinds and shapes are refused naming the key", arguments: [
        ("gestures: [single, quadruple]", "devices[0].gestures.gestures[1]"),
        ("gestures: single", "devices[0].gestures.gestures"),
        ("keys: [REL_X]", "devices[0].gestures.keys[0]"),
        ("keys: [KEY_NOPE]", "devices[0].gestures.keys[0]"),
        ("keys: 30", "devices[0].gestures.keys"),
        ("rotary: [KEY_A]", "devices[0].gestures.rotary[0]"),
        ("rotary: [\"\\u001b[31m\"]", "devices[0].gestures.rotary[0]"),
        ("colour: red", "devices[0].gestures.colour"),
    ])
    func badGestureShapes(line: String, key: String) {
        let yaml = "devices:\n  - match: { class: keyboard }\n    gestures:\n      \(line)\n"
        let error = Self.refusal(yaml)
        #expect(error?.key == key, "\(yaml): \(String(describing: error))")
        #expect(error?.line == 4, "\(yaml): \(String(describing: error))")
        #expect(error.map { !$0.description.contains("\u{1b}") } ?? true, "a raw escape reached the message")
    }
}
