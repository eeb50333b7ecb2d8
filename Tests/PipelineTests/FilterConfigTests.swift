import InputModel
import Pipeline
import ReactiveTesting
import Testing

@Suite("FilterConfig", .ownLiveResources) struct FilterConfigTests {
    static let exampleFile = Fixtures.repositoryRoot.appendingPathComponent("docs/evflow.example.yaml").path

    static func code(_ name: String) -> UInt16 { C.code(name) }

    @Test("the built-in defaults (no file)")
    func builtInDefaults() throws {
        let d = FilterConfig().defaults
        #expect(d.keys == 15 * ms && d.buttons == 25 * ms && d.switches == 20 * ms)
        #expect(d.absHysteresis == .fuzz && d.absMinInterval == 0 && d.relMinInterval == 0)
        #expect(try FilterConfig.parse(yaml: "") == FilterConfig())
        #expect(try FilterConfig.parse(yaml: "version: 1\n") == FilterConfig())
    }

    @Test("docs/evflow.example.yaml parses and resolves per device (class, name glob, vendor:product, order)")
    func exampleFile() throws {
        let config = try FilterConfig.load(path: Self.exampleFile)
        #expect(config.rules.count == 6)

        // The worn-out mouse: class rule (buttons 30ms), then its id rule (BTN_LEFT 45ms, wheel 60 Hz).
        let worn = device(name: "Logitech USB Optical Mouse", vendor: 0x046d, product: 0xc077, classes: [.mouse],
                          capabilities: [EventType.key: [C.BTN_LEFT, C.BTN_RIGHT],
                                         EventType.rel: [C.REL_X, C.REL_WHEEL]])
        var s = config.settings(for: worn)
        #expect(s.keys == [C.BTN_LEFT: .chatter(window: 45 * ms), C.BTN_RIGHT: .chatter(window: 30 * ms)])
        #expect(s.relative == [C.REL_WHEEL: .relative(minInterval: 16_666_666)])
        #expect(s.absolute.isEmpty && s.switches.isEmpty)

        // Another mouse: only the class rule.
        let other = device(name: "Other Mouse", vendor: 0x046d, product: 0xc078, classes: [.mouse],
                           capabilities: [EventType.key: [C.BTN_LEFT], EventType.rel: [C.REL_X, C.REL_WHEEL]])
        s = config.settings(for: other)
        #expect(s.keys == [C.BTN_LEFT: .chatter(window: 30 * ms)])
        #expect(s.relative.isEmpty)

        // Keyboards: the name glob turns keys off except KEY_SPACE; others keep the 15 ms default.
        let kbdCaps: [UInt16: Set<UInt16>] = [EventType.key: [C.KEY_A, Self.code("KEY_SPACE")],
                                              EventType.led: [C.LED_CAPSL]]
        let gaming = device(name: "Gaming Keyboard K70", classes: [.keyboard, .key], capabilities: kbdCaps)
        #expect(config.settings(for: gaming).keys == [Self.code("KEY_SPACE"): .chatter(window: 20 * ms)])
        let plain = device(name: "AT Translated Set 2 keyboard", classes: [.keyboard, .key], capabilities: kbdCaps)
        #expect(config.settings(for: plain).keys == [C.KEY_A: .chatter(window: 15 * ms),
                                                     Self.code("KEY_SPACE"): .chatter(window: 15 * ms)])
        // The name glob alone does not match a device of another class.
        let gamingMouse = device(name: "Gaming Mouse", classes: [.mouse], capabilities: [EventType.key: [C.BTN_LEFT]])
        #expect(config.settings(for: gamingMouse).keys == [C.BTN_LEFT: .chatter(window: 30 * ms)])

        // Joystick: rule-wide hysteresis and rate, one code overridden; buttons keep 25 ms.
        let throttle = Self.code("ABS_THROTTLE"), trigger = Self.code("BTN_TRIGGER")
        let stick = device(name: "Stick", classes: [.joystick], capabilities: [
            EventType.abs: [C.ABS_X, throttle], EventType.key: [trigger],
        ], absInfo: [C.ABS_X: AbsInfo(minimum: 0, maximum: 1023, fuzz: 16),
                     throttle: AbsInfo(minimum: 0, maximum: 255, fuzz: 2)])
        s = config.settings(for: stick)
        #expect(s.absolute == [C.ABS_X: .absolute(hysteresis: 4, minInterval: 4 * ms),
                               throttle: .absolute(hysteresis: 0, minInterval: 4 * ms)])
        #expect(s.keys == [trigger: .chatter(window: 25 * ms)])

        // Switches: SW_LID 200 ms from the rule, the others the 20 ms default.
        let tablet = Self.code("SW_TABLET_MODE")
        let lid = device(name: "Lid Switch", classes: [.switch], capabilities: [EventType.sw: [C.SW_LID, tablet]])
        #expect(config.settings(for: lid).switches == [C.SW_LID: .debounce(window: 200 * ms),
                                                       tablet: .debounce(window: 20 * ms)])

        // A light sensor matched by name: ABS_MISC debounced.
        let misc = Self.code("ABS_MISC")
        let light = device(name: "HID Ambient Light Sensor", classes: [], capabilities: [EventType.abs: [misc]],
                           absInfo: [misc: AbsInfo(minimum: 0, maximum: 65535, fuzz: 0)])
        #expect(config.settings(for: light).absolute == [misc: .debounce(window: 500 * ms)])
    }

    @Test("a duplicate key names the key and its line, not the whole document (found by fuzzing)")
    func duplicateKey() {
        let text = "version: 1\ndefaults:\n  keys: 5ms\nversion: 1\n"
        #expect {
            _ = try FilterConfig.parse(yaml: text, file: "dup.yaml")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            let message = String(describing: error)
            return error.key == "version" && error.line != nil && message.contains("duplicate key 'version'")
                && !message.contains("keys: 5ms")
        }
    }

    @Test("later rules override earlier ones; codes merge")
    func laterRulesOverride() throws {
        let yaml = """
        version: 1
        devices:
          - match: { class: mouse }
            buttons: 40ms
            codes: { BTN_RIGHT: 50ms, BTN_LEFT: 60ms }
          - match: { name: "Test*" }
            buttons: 10ms
            codes: { BTN_LEFT: off }
        """
        let config = try FilterConfig.parse(yaml: yaml)
        let mouse = device(name: "Test Mouse", classes: [.mouse],
                           capabilities: [EventType.key: [C.BTN_LEFT, C.BTN_RIGHT, Self.code("BTN_MIDDLE")]])
        #expect(config.settings(for: mouse).keys == [C.BTN_LEFT: .passthrough, C.BTN_RIGHT: .chatter(window: 50 * ms),
                                                     Self.code("BTN_MIDDLE"): .chatter(window: 10 * ms)])
    }

    @Test("durations and rates in every accepted form")
    func durationForms() throws {
        func buttons(_ text: String) throws -> Int64 {
            try FilterConfig.parse(yaml: "defaults: { buttons: \(text) }").defaults.buttons
        }
        #expect(try buttons("25ms") == 25 * ms)
        #expect(try buttons("1s") == 1_000 * ms)
        #expect(try buttons("0.5s") == 500 * ms)
        #expect(try buttons("500us") == 500_000)
        #expect(try buttons("40") == 40 * ms)
        #expect(try buttons("off") == 0)
        let rate = try FilterConfig.parse(yaml: "defaults: { rel: { max_rate: 125Hz } }").defaults.relMinInterval
        #expect(rate == 8 * ms)
    }

    /// Every error kind names the key path and the line (1-based).
    @Test("errors name file, line, key path and reason", arguments: [
        ("version: 1\ndefaults:\n  keyz: 10ms\n", 3, "defaults.keyz", "unknown key"),
        ("version: 1\ndefaults:\n  buttons: 25 parsecs\n", 3, "defaults.buttons", "bad duration"),
        ("version: 1\ndevices:\n  - match: { class: mouse }\n    codes:\n      KEY_NOPE: 10ms\n", 5,
         "devices[0].codes.KEY_NOPE", "unknown event code name"),
        ("devices:\n  - match: { class: toaster }\n", 2, "devices[0].match.class", "unknown class 'toaster'"),
        ("devices:\n  - match: { name: x }\n  - match:\n      id: \"zz:1\"\n", 4, "devices[1].match.id",
         "expected vendor:product in hex"),
        ("defaults:\n  buttons: [1, 2]\n", 2, "defaults.buttons", "expected a duration"),
        ("devices: 5\n", 1, "devices", "expected a list of rules"),
        ("devices:\n  - buttons: 10ms\n", 2, "devices[0].match", "missing"),
        ("version: 2\n", 1, "version", "unsupported version"),
        ("devices:\n  - match: { class: mouse }\n    codes:\n      REL_X: 10ms\n", 4, "devices[0].codes.REL_X",
         "expected a mapping"),
        ("defaults:\n  rel: { max_rate: -3 }\n", 2, "defaults.rel.max_rate", "bad rate"),
        // Regression (review of the device path): ABS_MT_* codes were accepted under codes: and
        // then filtered and stored across slots as one value.
        ("devices:\n  - match: { class: touchpad }\n    codes:\n      ABS_MT_POSITION_X: { hysteresis: 4 }\n", 4,
         "devices[0].codes.ABS_MT_POSITION_X", "multitouch axes cannot be filtered"),
        ("devices:\n  - match: { class: touchscreen }\n    codes:\n      ABS_MT_SLOT: off\n", 4,
         "devices[0].codes.ABS_MT_SLOT", "multitouch axes cannot be filtered"),
    ])
    func errors(yaml: String, line: Int, key: String, reason: String) {
        do {
            _ = try FilterConfig.parse(yaml: yaml, file: "test.yaml")
            Issue.record("no error for \(yaml)")
        } catch {
            #expect(error.file == "test.yaml")
            #expect(error.line == line)
            #expect(error.key == key)
            #expect(error.reason.contains(reason), "\(error.reason)")
            #expect(error.description.hasPrefix("test.yaml:\(line): \(key): "))
        }
    }

    @Test("invalid YAML: the error carries libyaml's line")
    func invalidYAML() {
        let yaml = "version: 1\ndefaults:\n  keys: 10ms\n  buttons: [unclosed\n"
        do {
            _ = try FilterConfig.parse(yaml: yaml, file: "bad.yaml")
            Issue.record("no error")
        } catch {
            #expect(error.key == "")
            #expect(error.reason.hasPrefix("not valid YAML"))
            #expect(error.line == 5)   // libyaml reports the unclosed flow sequence at the end of input
            #expect(error.description.hasPrefix("bad.yaml:5: not valid YAML"))
        }
    }

    @Test("a missing file is an error naming the file")
    func missingFile() {
        #expect(throws: ConfigError.self) { try FilterConfig.load(path: "/nonexistent/evflow.yaml") }
        do {
            _ = try FilterConfig.load(path: "/nonexistent/evflow.yaml")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/evflow.yaml: cannot open"))
        }
    }

    @Test("a device that never ends (/dev/zero) is refused as not a regular file, before a byte is read")
    func endlessFile() {
        do {
            _ = try FilterConfig.load(path: "/dev/zero")
            Issue.record("/dev/zero was read as a configuration")
        } catch {
            #expect(error.description == "/dev/zero: a character device, not a regular file")
        }
    }

    @Test("aliases used over and over (a billion laughs) are refused at once, not walked")
    func billionLaughs() {
        var text = "x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"
        for level in 1...9 {
            text += "x\(level): &x\(level) [" + Array(repeating: "*x\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        let start = ContinuousClock.now
        #expect(throws: ConfigError.self) { try FilterConfig.parse(yaml: text, file: "laughs.yaml") }
        do {
            _ = try FilterConfig.parse(yaml: text, file: "laughs.yaml")
        } catch {
            #expect(error.line == 1 && error.reason.contains("YAML aliases used over and over"))
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }
}
