import InputModel
import Pipeline
import ReactiveTesting
import Recording
import Testing

/// Issue #21 item 1: the configuration's `output` modes, the `match` keys that pick one device
/// of several (`phys`, `uniq`, udev `properties`) and the `panic_chord`.
@Suite("FilterConfig: output modes, device matching, panic chord (issue #21)", .ownLiveResources)
struct FilterConfigOutputTests {
    /// Two keyboards of the same model, told apart only by where they are plugged in.
    static func keyboard(phys: String?, uniq: String? = nil, properties: [String: String] = [:]) -> DeviceInfo {
        DeviceInfo(name: "Logitech USB Keyboard", inputID: InputID(bustype: 3, vendor: 0x046d, product: 0xc31c, version: 0x110),
                   phys: phys, uniq: uniq, classes: [.keyboard, .key], properties: properties,
                   capabilities: [EventType.key: [C.KEY_A]])
    }

    static let left = keyboard(phys: "usb-0000:00:14.0-1/input0",
                               properties: ["ID_PATH": "pci-0000:00:14.0-usb-0:1:1.0", "ID_SERIAL": "Logitech_USB_Keyboard"])
    static let right = keyboard(phys: "usb-0000:00:14.0-2/input0",
                                properties: ["ID_PATH": "pci-0000:00:14.0-usb-0:2:1.0", "ID_SERIAL": "Logitech_USB_Keyboard"])

    static func parseError(_ yaml: String) -> ConfigError? {
        do {
            _ = try FilterConfig.parse(yaml: yaml, file: "test.yaml")
            return nil
        } catch {
            return error
        }
    }

    // MARK: output

    @Test("output: observe is the default; virtual and observe rules resolve in file order")
    func outputModes() throws {
        let config = try FilterConfig.parse(yaml: """
        version: 1
        devices:
          - match: { class: keyboard }
            output: virtual
          - match: { phys: "usb-0000:00:14.0-2/*" }
            output: observe
          - match: { class: keyboard }
            keys: 20ms
        """)
        #expect(config.rules.map(\.output) == [.virtual, .observe, nil])
        #expect(config.outputMode(for: Self.left) == .virtual)
        #expect(config.outputMode(for: Self.right) == .observe)   // the later rule wins
        let mouse = device(name: "Mouse", classes: [.mouse], capabilities: [EventType.key: [C.BTN_LEFT]])
        #expect(config.outputMode(for: mouse) == .observe)
        #expect(FilterConfig().outputMode(for: Self.left) == .observe)
        // Written in any case, with spaces around, as the other keywords are.
        let upper = try FilterConfig.parse(yaml: "devices:\n  - match: { class: keyboard }\n    output: \" Virtual \"\n")
        #expect(upper.rules[0].output == .virtual)
    }

    @Test("a bad output names file, line and key and lists both modes", arguments: [
        "grab", "\"\"", "[virtual]", "{ mode: virtual }", "true", "uinput",
    ])
    func badOutput(value: String) throws {
        let error = try #require(Self.parseError("version: 1\ndevices:\n  - match: { class: keyboard }\n    output: \(value)\n"))
        #expect(error.file == "test.yaml" && error.line == 4 && error.key == "devices[0].output")
        #expect(error.reason == "expected observe or virtual", "\(error)")
    }

    // MARK: match

    @Test("phys, uniq and udev properties pick one of two identical keyboards")
    func matchPicksOneOfTwo() throws {
        let config = try FilterConfig.parse(yaml: """
        devices:
          - match: { class: keyboard, phys: "usb-0000:00:14.0-2/*" }
            keys: 30ms
          - match:
              properties: { ID_PATH: "pci-0000:00:14.0-usb-0:1:*", ID_SERIAL: "Logitech_*" }
            output: virtual
        """)
        #expect(config.rules[0].match == FilterConfig.Match(deviceClass: .keyboard, phys: "usb-0000:00:14.0-2/*"))
        #expect(config.rules[1].match.properties == ["ID_PATH": "pci-0000:00:14.0-usb-0:1:*", "ID_SERIAL": "Logitech_*"])
        #expect(config.settings(for: Self.right).keys == [C.KEY_A: .chatter(window: 30 * ms)])
        #expect(config.settings(for: Self.left).keys == [C.KEY_A: .chatter(window: 15 * ms)])
        #expect(config.outputMode(for: Self.left) == .virtual)
        #expect(config.outputMode(for: Self.right) == .observe)
    }

    @Test("a device without the phys, uniq or property never matches it; every property given must match")
    func missingFieldsDoNotMatch() {
        let bare = Self.keyboard(phys: nil)
        #expect(!FilterConfig.Match(phys: "*").matches(bare))
        #expect(!FilterConfig.Match(uniq: "*").matches(bare))
        #expect(!FilterConfig.Match(properties: ["ID_PATH": "*"]).matches(bare))
        #expect(FilterConfig.Match(phys: "*").matches(Self.left))

        let bluetooth = Self.keyboard(phys: "00:1a:7d:da:71:13", uniq: "e4:17:d8:3a:0b:9c",
                                      properties: ["ID_BUS": "bluetooth"])
        #expect(FilterConfig.Match(uniq: "e4:17:d8:3a:0b:9c").matches(bluetooth))
        #expect(FilterConfig.Match(uniq: "e4:17:d8:*").matches(bluetooth))
        #expect(!FilterConfig.Match(uniq: "e4:17:d8:3a:0b:9d").matches(bluetooth))
        #expect(FilterConfig.Match(properties: ["ID_BUS": "bluetooth"]).matches(bluetooth))
        #expect(!FilterConfig.Match(properties: ["ID_BUS": "bluetooth", "ID_PATH": "*"]).matches(bluetooth))
        // Globs match the whole value, as `name` does.
        #expect(!FilterConfig.Match(properties: ["ID_BUS": "blue"]).matches(bluetooth))
        #expect(FilterConfig.Match(properties: ["ID_BUS": "blue?ooth"]).matches(bluetooth))
    }

    @Test("what a live device keeps of its udev properties is what a match may name")
    func keptUdevProperties() throws {
        #expect(DeviceInfo.keepsUdevProperty("ID_PATH"))
        #expect(DeviceInfo.keepsUdevProperty("ID_SERIAL"))
        #expect(DeviceInfo.keepsUdevProperty("ID_INPUT_WIDTH_MM"))   // ID_INPUT_ but not a class flag
        #expect(DeviceInfo.keepsUdevProperty("LIBINPUT_DEVICE_GROUP"))
        #expect(!DeviceInfo.keepsUdevProperty("ID_INPUT_KEYBOARD"))
        #expect(!DeviceInfo.keepsUdevProperty("ID_INPUT"))
        #expect(!DeviceInfo.keepsUdevProperty("DEVPATH"))
        let config = try FilterConfig.parse(yaml: """
        devices:
          - match: { properties: { ID_INPUT_WIDTH_MM: "2?0", LIBINPUT_DEVICE_GROUP: "3/46d/*" } }
            output: virtual
        """)
        let pad = Self.keyboard(phys: nil, properties: ["ID_INPUT_WIDTH_MM": "220", "LIBINPUT_DEVICE_GROUP": "3/46d/c31c"])
        #expect(config.outputMode(for: pad) == .virtual)
    }

    /// What docs/configuration.md says a replay can match: a libinput recording keeps its udev
    /// properties but no phys or uniq; an evemu recording none of the three.
    @Test("replayed recordings: a libinput recording's udev properties match; no phys or uniq")
    func replayedRecordings() throws {
        let touchpad = try Recording.read(contentsOf: Fixtures.recording("libinput/PS2-scrolls.yml")).devices[0].info
        let byGroup = FilterConfig.Match(properties: ["LIBINPUT_DEVICE_GROUP": "11/2/7:isa0060/*"])
        #expect(byGroup.matches(touchpad))
        #expect(!FilterConfig.Match(phys: "*").matches(touchpad))
        #expect(!FilterConfig.Match(uniq: "*").matches(touchpad))
        let keyboard = try Recording.read(contentsOf: Fixtures.recording(Self.evemuKeyboard)).devices[0].info
        #expect(keyboard.phys == nil && keyboard.uniq == nil && keyboard.properties.isEmpty)
        #expect(!FilterConfig.Match(properties: ["ID_PATH": "*"]).matches(keyboard))
    }

    static let evemuKeyboard = "evemu-devices/keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events"

    @Test("bad match values name file, line and key", arguments: [
        ("devices:\n  - match: { phys: \"\" }\n", 2, "devices[0].match.phys", "empty pattern"),
        ("devices:\n  - match: { uniq: \"\" }\n", 2, "devices[0].match.uniq", "empty pattern"),
        ("devices:\n  - match: { phys: [a, b] }\n", 2, "devices[0].match.phys", "expected a string"),
        ("devices:\n  - match: { uniq: { a: b } }\n", 2, "devices[0].match.uniq", "expected a string"),
        ("devices:\n  - match:\n      properties: \"ID_PATH=pci-*\"\n", 3, "devices[0].match.properties", "expected a mapping"),
        ("devices:\n  - match:\n      properties: {}\n", 3, "devices[0].match.properties", "empty properties"),
        ("devices:\n  - match:\n      properties:\n        ID_PATH: \"\"\n", 4, "devices[0].match.properties.ID_PATH",
         "empty pattern"),
        ("devices:\n  - match:\n      properties:\n        ID_PATH: [pci-*]\n", 4, "devices[0].match.properties.ID_PATH",
         "expected a string"),
        ("devices:\n  - match:\n      properties:\n        ID_INPUT_KEYBOARD: \"1\"\n", 4,
         "devices[0].match.properties.ID_INPUT_KEYBOARD", "a class flag: use class"),
        ("devices:\n  - match:\n      properties:\n        DEVPATH: \"/devices/*\"\n", 4,
         "devices[0].match.properties.DEVPATH", "not a udev property evflowd keeps (one of ID_*, LIBINPUT_*"),
        ("devices:\n  - match: { class: keyboard }\n  - match: { serial: x }\n", 3, "devices[1].match.serial",
         "unknown key (expected class, name, id, phys, uniq, properties)"),
        ("devices:\n  - match: {}\n", 2, "devices[0].match", "empty match"),
    ])
    func badMatch(yaml: String, line: Int, key: String, reason: String) throws {
        let error = try #require(Self.parseError(yaml), "no error for \(yaml)")
        #expect(error.file == "test.yaml" && error.line == line && error.key == key, "\(error)")
        #expect(error.reason.contains(reason), "\(error.reason)")
    }

    // MARK: panic chord

    @Test("panic_chord: key and button names, in any order; the default without it")
    func panicChord() throws {
        #expect(try FilterConfig.parse(yaml: "version: 1\n").panicChord == [C.code("KEY_BACKSPACE"), C.code("KEY_ESC"), C.code("KEY_ENTER")])
        #expect(FilterConfig.defaultPanicChord == [C.code("KEY_BACKSPACE"), C.code("KEY_ESC"), C.code("KEY_ENTER")])
        let config = try FilterConfig.parse(yaml: "panic_chord: [KEY_RIGHTCTRL, KEY_PAUSE]\n")
        #expect(config.panicChord == [C.code("KEY_RIGHTCTRL"), C.code("KEY_PAUSE")])
        let mouse = try FilterConfig.parse(yaml: "panic_chord:\n  - BTN_LEFT\n  - BTN_RIGHT\n  - BTN_MIDDLE\n")
        #expect(mouse.panicChord == [C.BTN_LEFT, C.BTN_RIGHT, C.code("BTN_MIDDLE")])
        let eight = ["KEY_A", "KEY_B", "KEY_C", "KEY_D", "KEY_E", "KEY_F", "KEY_G", "KEY_H"]
        #expect(try FilterConfig.parse(yaml: "panic_chord: [\(eight.joined(separator: ", "))]\n").panicChord.count == 8)
    }

    @Test("a bad panic_chord names file, line and key", arguments: [
        ("version: 1\npanic_chord: [KEY_ESC]\n", 2, "panic_chord",
         "1 key(s): a chord has 2 to 8 keys (one key alone would release the grabs whenever it is typed)"),
        ("version: 1\npanic_chord: []\n", 2, "panic_chord", "0 key(s)"),
        ("panic_chord: [KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I]\n", 1, "panic_chord",
         "9 key(s): a chord has 2 to 8 keys (more cannot be held down at once)"),
        ("panic_chord: KEY_ESC\n", 1, "panic_chord", "expected a list of 2 to 8 key names"),
        ("panic_chord: { KEY_ESC: 1 }\n", 1, "panic_chord", "expected a list"),
        ("version: 1\npanic_chord:\n  - KEY_ESC\n  - KEY_ESC\n", 4, "panic_chord[1]", "KEY_ESC is named twice"),
        // An alias of a code already named is the same key twice.
        ("panic_chord: [BTN_SOUTH, BTN_A]\n", 1, "panic_chord[1]", "BTN_A is named twice"),
        ("panic_chord:\n  - KEY_ESC\n  - KEY_NOPE\n", 3, "panic_chord[1]", "'KEY_NOPE' is not a key or button name"),
        ("panic_chord: [KEY_ESC, REL_X]\n", 1, "panic_chord[1]", "'REL_X' is not a key or button name"),
        ("panic_chord: [KEY_ESC, SW_LID]\n", 1, "panic_chord[1]", "not a key or button name"),
        ("panic_chord: [KEY_ESC, \"EV_KEY:0x2ff\"]\n", 1, "panic_chord[1]", "not a key or button name"),
        ("panic_chord: [KEY_ESC, KEY_RESERVED]\n", 1, "panic_chord[1]", "not a key or button name"),
        ("panic_chord: [KEY_ESC, 28]\n", 1, "panic_chord[1]", "not a key or button name"),
        ("panic_chord: [KEY_ESC, [KEY_ENTER]]\n", 1, "panic_chord[1]", "expected a key name"),
    ])
    func badPanicChord(yaml: String, line: Int, key: String, reason: String) throws {
        let error = try #require(Self.parseError(yaml), "no error for \(yaml)")
        #expect(error.file == "test.yaml" && error.line == line && error.key == key, "\(error)")
        #expect(error.reason.contains(reason), "\(error.reason)")
        #expect(error.description.hasPrefix("test.yaml:\(line): \(key): "))
    }

    // MARK: reload

    /// FilterConfig's equality decides whether a SIGHUP changed anything: a file that differs
    /// only in what is grabbed, or in the panic chord, must count as a new configuration.
    @Test("a configuration differing only in output, panic_chord or the new match keys is not equal")
    func equalityCoversTheNewKeys() throws {
        let base = "version: 1\ndevices:\n  - match: { class: keyboard }\n    keys: 20ms\n"
        let a = try FilterConfig.parse(yaml: base)
        #expect(try FilterConfig.parse(yaml: base) == a)
        #expect(try FilterConfig.parse(yaml: base + "    output: observe\n") != a)   // explicit observe is a rule change
        #expect(try FilterConfig.parse(yaml: base + "    output: virtual\n") != a)
        #expect(try FilterConfig.parse(yaml: base + "    output: virtual\n") != FilterConfig.parse(yaml: base + "    output: observe\n"))
        #expect(try FilterConfig.parse(yaml: base + "panic_chord: [KEY_ESC, KEY_F12]\n") != a)
        // The default chord written out is the default.
        #expect(try FilterConfig.parse(yaml: base + "panic_chord: [KEY_ENTER, KEY_ESC, KEY_BACKSPACE]\n") == a)
        let match = "version: 1\ndevices:\n  - match: { class: keyboard, "
        let keys = "}\n    keys: 20ms\n"
        #expect(try FilterConfig.parse(yaml: match + "phys: \"usb-*\" " + keys) != a)
        #expect(try FilterConfig.parse(yaml: match + "uniq: \"ab*\" " + keys) != FilterConfig.parse(yaml: match + "uniq: \"ac*\" " + keys))
        #expect(try FilterConfig.parse(yaml: match + "properties: { ID_PATH: \"pci-*\" } " + keys)
                != FilterConfig.parse(yaml: match + "properties: { ID_PATH: \"platform-*\" } " + keys))
    }

    // MARK: --check-config

    @Test("--check-config's summary: each rule's output, and the panic chord by name")
    func checkSummary() throws {
        let config = try FilterConfig.parse(yaml: """
        version: 1
        panic_chord: [KEY_RIGHTCTRL, KEY_PAUSE]
        devices:
          - match: { class: keyboard }
            keys: 20ms
          - match: { class: keyboard, id: "046d:c31c", phys: "usb-*-2/input0" }
            output: virtual
          - match: { uniq: "e4:17:*", properties: { ID_PATH: "pci-*", ID_BUS: "bluetooth" } }
            output: observe
        """)
        #expect(config.checkSummary == [
            "devices[1]: output virtual: matching devices are grabbed and re-emitted through a virtual device"
                + " (match class: keyboard, id: 046d:c31c, phys: \"usb-*-2/input0\")",
            "devices[2]: output observe: matching devices are observed, not grabbed"
                + " (match uniq: \"e4:17:*\", properties: { ID_BUS: \"bluetooth\", ID_PATH: \"pci-*\" })",
            "panic chord: KEY_RIGHTCTRL + KEY_PAUSE (held together on a grabbed device, it releases every grab)",
        ])
        #expect(FilterConfig().checkSummary == [
            "no rule sets output: virtual: every device is observed, none is grabbed",
            "panic chord: KEY_ESC + KEY_BACKSPACE + KEY_ENTER (held together on a grabbed device, it releases every grab)",
        ])
    }
}
