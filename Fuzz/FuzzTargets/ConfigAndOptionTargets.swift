#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DeviceStreams
import InputModel
import OptionValues
import Pipeline
import Reactive
import Recording

// The targets of issue #25: every number a configuration's rates, windows and timeouts can
// take (and, issue #21, every text its output modes, match globs and panic chord can), and
// every value of evflowd's and evflowctl's numeric options.

extension FuzzTarget {
    // MARK: configuration values

    /// Every place a configuration takes a rate, a window or a timeout: the YAML with `VALUE`
    /// where the fuzzed value goes, and the key path an error must name.
    static let configValuePlaces: [(yaml: String, key: String)] = [
        ("defaults:\n  keys: VALUE\n", "defaults.keys"),
        ("defaults:\n  buttons: VALUE\n", "defaults.buttons"),
        ("defaults:\n  switches: VALUE\n", "defaults.switches"),
        ("defaults:\n  spurious_window: VALUE\n", "defaults.spurious_window"),
        ("defaults:\n  abs: { max_rate: VALUE }\n", "defaults.abs.max_rate"),
        ("defaults:\n  rel: { max_rate: VALUE }\n", "defaults.rel.max_rate"),
        ("devices:\n  - match: { class: keyboard }\n    keys: VALUE\n", "devices[0].keys"),
        ("devices:\n  - match: { class: mouse }\n    buttons: VALUE\n", "devices[0].buttons"),
        ("devices:\n  - match: { class: switch }\n    switches: VALUE\n", "devices[0].switches"),
        ("devices:\n  - match: { class: keyboard }\n    spurious_window: VALUE\n", "devices[0].spurious_window"),
        ("devices:\n  - match: { class: touchpad }\n    abs: { max_rate: VALUE }\n", "devices[0].abs.max_rate"),
        ("devices:\n  - match: { class: mouse }\n    rel: { max_rate: VALUE }\n", "devices[0].rel.max_rate"),
        ("devices:\n  - match: { class: keyboard }\n    codes:\n      KEY_A: VALUE\n", "devices[0].codes.KEY_A"),
        ("devices:\n  - match: { class: mouse }\n    codes:\n      BTN_LEFT: { window: VALUE }\n", "devices[0].codes.BTN_LEFT.window"),
        ("devices:\n  - match: { class: keyboard }\n    codes:\n      KEY_A: { spurious_window: VALUE }\n",
         "devices[0].codes.KEY_A.spurious_window"),
        ("devices:\n  - match: { class: switch }\n    codes:\n      SW_LID: VALUE\n", "devices[0].codes.SW_LID"),
        ("devices:\n  - match: { class: switch }\n    codes:\n      SW_LID: { debounce: VALUE }\n", "devices[0].codes.SW_LID.debounce"),
        ("devices:\n  - match: { class: touchpad }\n    codes:\n      ABS_X: { max_rate: VALUE }\n", "devices[0].codes.ABS_X.max_rate"),
        ("devices:\n  - match: { class: touchpad }\n    codes:\n      ABS_MISC: { debounce: VALUE }\n", "devices[0].codes.ABS_MISC.debounce"),
        ("devices:\n  - match: { class: mouse }\n    codes:\n      REL_WHEEL: { max_rate: VALUE }\n", "devices[0].codes.REL_WHEEL.max_rate"),
        // Issue #21: the output mode, the match keys that pick one device of several, the
        // panic chord (appended, so the committed seeds keep their places).
        ("devices:\n  - match: { class: keyboard }\n    output: VALUE\n", "devices[0].output"),
        ("devices:\n  - match: { phys: VALUE }\n    output: virtual\n", "devices[0].match.phys"),
        ("devices:\n  - match: { uniq: VALUE }\n    output: virtual\n", "devices[0].match.uniq"),
        ("devices:\n  - match:\n      properties: { ID_PATH: VALUE }\n    output: virtual\n", "devices[0].match.properties.ID_PATH"),
        ("panic_chord: [KEY_ESC, VALUE]\n", "panic_chord[1]"),
    ]

    /// Units a value may carry (the empty one: a bare number).
    static let configUnits = ["", "ms", "us", "µs", "ns", "s", "hz", "Hz", "e300", "e-320"]

    /// A number from fuzz bytes, so that every `Double` is reached: subnormal, huge,
    /// negative, NaN and the infinities come from the bit pattern; the text forms
    /// (the Double's or the Float's shortest text, an integer, or the bytes as text) from the
    /// form byte.
    static func fuzzedNumber(_ bytes: ArraySlice<UInt8>, form: UInt8) -> String {
        var bits: UInt64 = 0
        for b in bytes.prefix(8) { bits = bits << 8 | UInt64(b) }
        let d = Double(bitPattern: bits)
        switch form % 4 {
        case 0: return d.description
        case 1: return Float(d).description   // subnormal, zero or infinite for most doubles
        case 2: return Int64(bitPattern: bits).description
        default:   // the bytes as text: whatever else someone could type (printable ASCII, no quotes)
            let printable = bytes.filter { $0 >= 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            return String(decoding: printable, as: UTF8.self)
        }
    }

    /// Input: place byte, form byte, unit byte, then the number's bytes. The invariant: the
    /// parse refuses with a ConfigError naming the file, the line of the value and the key
    /// path of the place — or gives a configuration that builds every device's filters and
    /// runs them (`checkConfigBuilds`) without trapping.
    func checkConfigValues(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard bytes.count >= 3 else { return }
        let place = Self.configValuePlaces[Int(bytes[0]) % Self.configValuePlaces.count]
        let unit = Self.configUnits[Int(bytes[2]) % Self.configUnits.count]
        let value = Self.fuzzedNumber(bytes[3...], form: bytes[1]) + unit
        let yaml = "version: 1\n" + place.yaml.split(separator: "VALUE", omittingEmptySubsequences: false)
            .joined(separator: "\"\(value)\"")
        let config: FilterConfig
        do {
            config = try FilterConfig.parse(yaml: yaml, file: Self.fileName)
        } catch {
            let line = yaml.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("\"\(value)\"") }
            guard error.file == Self.fileName, error.key == place.key, error.line == line.map({ $0 + 1 }) else {
                throw fail("'\(value)' at \(place.key): the error names \(error.file ?? "no file"):\(error.line ?? 0) \(error.key): \(error)")
            }
            return
        }
        try checkConfigBuilds(config, what: "'\(value)' at \(place.key)")
        try checkReload(config, what: "'\(value)' at \(place.key)")
    }

    /// Devices of every class the configuration's rules name, with the codes they filter.
    static let configProbeDevices: [DeviceInfo] = {
        let id = InputID(bustype: 3, vendor: 0x046d, product: 0xc077, version: 1)
        let keys: Set<UInt16> = [30, 0x110, 0x2ff]   // KEY_A, BTN_LEFT, KEY_MAX
        return [
            DeviceInfo(name: "keyboard", inputID: id, classes: [.keyboard], capabilities: [EventType.key: keys]),
            DeviceInfo(name: "mouse", inputID: id, classes: [.mouse],
                       capabilities: [EventType.key: [0x110, 0x111], EventType.rel: [0, 1, 8]]),
            DeviceInfo(name: "touchpad", inputID: id, classes: [.touchpad],
                       capabilities: [EventType.key: [0x110, 0x14a], EventType.abs: [0, 1, 0x28]],
                       absInfo: [0: AbsInfo(minimum: 0, maximum: 4000, fuzz: 8), 1: AbsInfo(minimum: 0, maximum: 3000, fuzz: 8),
                                 0x28: AbsInfo(minimum: 0, maximum: 255)]),
            DeviceInfo(name: "lid", inputID: id, classes: [.switch], capabilities: [EventType.sw: [0]]),
        ]
    }()

    /// An accepted configuration resolves to windows and intervals from 0 to
    /// `FilterConfig.maxIntervalNanoseconds` for every device, and its filters run: a burst
    /// of presses, releases, axis values and wheel deltas, then every deadline fired in turn
    /// until nothing is held (bounded), at event times of a machine up for years.
    func checkConfigBuilds(_ config: FilterConfig, what: String) throws(InvariantFailure) {
        let range: ClosedRange<Int64> = 0...FilterConfig.maxIntervalNanoseconds
        // What --check-config prints, and a panic chord that a hand can hold.
        _ = config.checkSummary
        guard FilterConfig.panicChordSizes.contains(config.panicChord.count) else {
            throw fail("\(what): a panic chord of \(config.panicChord.count) keys")
        }
        for device in Self.configProbeDevices {
            _ = config.outputMode(for: device)
            let settings = config.settings(for: device)
            for filter in [settings.keys, settings.switches, settings.absolute, settings.relative].flatMap(\.values) {
                let spans: [Int64]
                switch filter {
                case .passthrough: spans = []
                case .chatter(let w, _, let s): spans = [w, s]
                case .debounce(let w): spans = [w]
                case .absolute(_, let i), .relative(let i): spans = [i]
                }
                guard spans.allSatisfy(range.contains) else {
                    throw fail("\(what): \(device.name) resolves to \(filter), outside \(range)")
                }
            }
            var filter = NoiseFilter(settings: settings)
            var time: Int64 = 100 * 365 * 86_400 * 1_000_000_000 / 100   // one year of uptime
            for step in 0..<8 {
                var events: [InputEvent] = []
                for (type, codes) in device.capabilities {
                    for code in codes.sorted() {
                        let value: Int32 = type == EventType.key || type == EventType.sw ? Int32(step % 2) : Int32(step * 7)
                        events.append(InputEvent(time: time, type: type, code: code, value: value))
                    }
                }
                _ = filter.process(InputFrame(time: time, events: events))
                time += 1 + Int64(step) * 1_000_000
            }
            var fired = 0
            while let deadline = filter.nextDeadline, fired < 64 {
                guard deadline >= 0 else { throw fail("\(what): \(device.name) holds a value due at \(deadline)") }
                _ = filter.fire(at: max(deadline, time))
                time = max(deadline, time)
                fired += 1
            }
        }
    }

    /// What a SIGHUP does with an accepted configuration: a hub running on the built-in one,
    /// with every probe device present and fed, reloads it; every device then has the
    /// configuration's settings, and its frames and held values (fired through the longest
    /// window) flow until the hub stops — without trapping.
    func checkReload(_ config: FilterConfig, what: String) throws(InvariantFailure) {
        let scheduler = VirtualTimeScheduler(initialClock: 1_000_000_000)
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        let devices = PublishSubject<DeviceStream>()
        let running = hub.run(devices.asObservable())
        scheduler.advance(by: .zero)
        let feeds = Self.configProbeDevices.map { info in
            let frames = PublishSubject<InputFrame>()
            devices.onNext(DeviceStream(info: info, frames: frames.asObservable()))
            return frames
        }
        scheduler.advance(by: .zero)
        func feed(_ value: Int32) {
            for (info, frames) in zip(Self.configProbeDevices, feeds) {
                let events = info.capabilities.flatMap { type, codes in
                    codes.sorted().map { InputEvent(time: scheduler.now, type: type, code: $0, value: value) }
                }
                frames.onNext(InputFrame(time: scheduler.now, events: events))
            }
            scheduler.advance(by: .milliseconds(1))
        }
        feed(1)
        hub.reload(config)
        scheduler.advance(by: .zero)
        for info in Self.configProbeDevices where hub.currentSettings(of: info.id) != config.settings(for: info) {
            running.dispose()
            scheduler.run()
            throw fail("\(what): after the reload \(info.name) does not have the configuration's settings")
        }
        for value: Int32 in [0, 1, 0, 2] { feed(value) }
        scheduler.advance(by: RxTimeInterval(nanoseconds: FilterConfig.maxIntervalNanoseconds + 1))
        running.dispose()
        scheduler.run()
    }

    // MARK: option values

    /// Input: option byte, then the value's bytes (as `fuzzedNumber` forms, the form byte
    /// first). The invariant: the option's parser (the very function evflowd's and evflowctl's
    /// ArgumentParser options call) refuses with a reason, or gives a value in its documented
    /// range whose derived times are computed without overflow.
    func checkOptions(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard bytes.count >= 2 else { return }
        let text = Self.fuzzedNumber(bytes[2...], form: bytes[1])
        /// The parsed value, or nil for a refusal (which must say why).
        func parsed<T>(_ parse: (String) throws(OptionValueError) -> T) throws(InvariantFailure) -> T? {
            do {
                return try parse(text)
            } catch {
                guard !error.reason.isEmpty else { throw fail("'\(text)' refused without a reason") }
                return nil
            }
        }
        // 7 (mod 8) is `top --interval` (issue #34); the rest keep their committed seeds' places.
        switch bytes[0] % 8 == 7 ? 4 : bytes[0] % 4 {
        case 0:
            guard let speed = try parsed({ (t) throws(OptionValueError) in try OptionValues.replaySpeed(t) }) else { return }
            guard speed.isInfinite || OptionValues.replaySpeeds.contains(speed) else {
                throw fail("--speed '\(text)' gave \(speed)")
            }
            // Every recorded time maps to a delivery time (saturating), in order.
            let origin: Int64 = 1_000_000_000
            var last = Int64.min
            for t in [Int64.min, -1, 0, 1, 1_000_000_000, Int64.max / 2, Int64.max] {
                let at = ReplaySource.scheduledTime(origin: origin, recorded: t, speed: speed)
                guard at >= last else { throw fail("--speed \(speed): recorded \(t) is delivered at \(at), before \(last)") }
                last = at
            }
        case 1:
            guard let timeout = try parsed({ (t) throws(OptionValueError) in try OptionValues.idleTimeout(t) }) else { return }
            let nanos = RxTimeInterval(clamping: timeout).nanoseconds
            guard nanos > 0, nanos < Int64.max, timeout.components.seconds * 1_000_000_000 == nanos else {
                throw fail("--idle-timeout '\(text)' gave \(timeout) = \(nanos) ns")
            }
        case 2:
            guard let n = try parsed({ (t) throws(OptionValueError) in try OptionValues.clientLimit(t) }) else { return }
            guard OptionValues.clientLimits.contains(n) else { throw fail("--max-clients '\(text)' gave \(n)") }
        case 4:
            guard let nanos = try parsed({ (t) throws(OptionValueError) in try OptionValues.topInterval(t) }) else { return }
            let bounds = Int64(OptionValues.topIntervalSeconds.lowerBound * 1e9)...Int64(OptionValues.topIntervalSeconds.upperBound * 1e9)
            guard bounds.contains(nanos) else { throw fail("top --interval '\(text)' gave \(nanos) ns") }
        default:
            guard let nanos = try parsed({ (t) throws(OptionValueError) in try OptionValues.recordDuration(t) }) else { return }
            let bounds = Int64(OptionValues.recordSeconds.lowerBound * 1e9)...Int64(OptionValues.recordSeconds.upperBound * 1e9)
            guard bounds.contains(nanos) else { throw fail("--duration '\(text)' gave \(nanos) ns") }
        }
    }
}
