import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// The `sensors:` section of the configuration and `FilterConfig.sensorSettings(for:)`.
@Suite("FilterConfig: sensors", .ownLiveResources)
struct SensorConfigTests {
    static func sensor(_ name: String, _ channels: [(String, SensorQuantity)], properties: [String: String] = [:]) -> SensorInfo {
        SensorInfo(id: DeviceID(rawValue: name), name: name, sysname: "iio:device0", properties: properties,
                   channels: channels.map { SensorChannel(name: $0.0, quantity: $0.1) }, buffered: false)
    }

    static let als = sensor("als", [("illuminance", .illuminance)], properties: ["ID_PATH": "platform-INT33A0:00"])
    static let accel = sensor("accel_3d", [("accel_x", .accel), ("accel_y", .accel), ("accel_z", .accel)])

    @Test("built-in defaults: light 10 % (≥ 1 lx), 500 ms settle, phantom zero; accel median 3, 10 Hz, orientation")
    func builtIn() {
        let config = FilterConfig()
        let light = config.sensorSettings(for: Self.als)
        #expect(light.channel("illuminance") == SensorChannelFilterSettings(
            outliers: OutlierSettings(phantomZero: true), hysteresis: 1, relativeHysteresis: 0.1, settle: 500 * ms))
        #expect(light.minInterval == 0 && light.orientation == nil)
        let a = config.sensorSettings(for: Self.accel)
        #expect(a.channel("accel_y") == SensorChannelFilterSettings(smoothing: .median(3)))
        #expect(a.minInterval == 100 * ms)
        #expect(a.orientation == OrientationSettings(hysteresis: 10, flatAngle: 25, gravityTolerance: 0.4))
        let temp = config.sensorSettings(for: Self.sensor("bme280", [("temp", .temp), ("pressure", .pressure)]))
        #expect(temp.channel("temp").hysteresis == 0.1 && temp.channel("pressure").hysteresis == 0.01)
    }

    @Test("issue #29: a unitless intensity channel gets no lux defaults — no absolute band, only the relative one")
    func intensityHasNoLuxDefaults() {
        let raw = FilterConfig().sensorSettings(for: Self.sensor("tsl2563", [("intensity_both", .intensity)]))
        #expect(raw.channel("intensity_both") == SensorChannelFilterSettings(
            outliers: OutlierSettings(phantomZero: true), hysteresis: 0, relativeHysteresis: 0.1, settle: 500 * ms))
    }

    @Test("defaults per quantity, then matching rules in order, then a rule's channels entry")
    func resolution() throws {
        let config = try FilterConfig.parse(yaml: """
            sensors:
              defaults:
                illuminance: { hysteresis: 20%, settle: 1s, smoothing: mean 4 }
                accel: { max_rate: 25, orientation: { hysteresis: 15, flat_angle: 20 } }
              devices:
                - match: { name: "als*" }
                  settle: 300ms
                  outliers: { spike: [5, 50%], confirm: 2s }
                - match: { properties: { ID_PATH: "platform-INT33A0*" } }
                  channels:
                    illuminance: { hysteresis: [2, 5%], outliers: off }
                - match: { name: "nothing-matches" }
                  max_rate: 1
                - match: { name: "accel_*" }
                  orientation: off
                  smoothing: median 5
            """)
        let light = config.sensorSettings(for: Self.als).channel("illuminance")
        #expect(light == SensorChannelFilterSettings(outliers: OutlierSettings(confirmTimeout: 2_000 * ms),
                                                     smoothing: .mean(4), hysteresis: 2, relativeHysteresis: 0.05,
                                                     settle: 300 * ms))
        let a = config.sensorSettings(for: Self.accel)
        #expect(a.minInterval == 40 * ms)
        #expect(a.orientation == nil)
        #expect(a.channel("accel_z").smoothing == .median(5))
        // Without the last rule the orientation comes from the defaults.
        let other = config.sensorSettings(for: Self.sensor("bmi160", [("accel_x", .accel), ("accel_y", .accel), ("accel_z", .accel)]))
        #expect(other.orientation == OrientationSettings(hysteresis: 15, flatAngle: 20))
        // A property rule needs the property.
        let bare = config.sensorSettings(for: Self.sensor("als", [("illuminance", .illuminance)]))
        #expect(bare.channel("illuminance").hysteresis == 0 && bare.channel("illuminance").relativeHysteresis == 0.2)
    }

    /// Every mistake names the line and the key path.
    @Test("errors name the line, the key path and what is wrong", arguments: [
        ("sensors:\n  defaults:\n    lux: { settle: 1s }\n", 3, "sensors.defaults.lux", "unknown quantity"),
        ("sensors:\n  defaults:\n    illuminance: { hysteresis: -1 }\n", 3, "sensors.defaults.illuminance.hysteresis", "bad hysteresis"),
        ("sensors:\n  defaults:\n    illuminance: { hysteresis: 2000% }\n", 3, "sensors.defaults.illuminance.hysteresis", "bad hysteresis"),
        ("sensors:\n  defaults:\n    illuminance: { hysteresis: [1, 2] }\n", 3, "sensors.defaults.illuminance.hysteresis", "given once"),
        ("sensors:\n  defaults:\n    illuminance: { hysteresis: nan }\n", 3, "sensors.defaults.illuminance.hysteresis", "bad hysteresis"),
        ("sensors:\n  defaults:\n    illuminance: { settle: -5ms }\n", 3, "sensors.defaults.illuminance.settle", "out of range"),
        ("sensors:\n  defaults:\n    accel: { smoothing: median 0 }\n", 3, "sensors.defaults.accel.smoothing", "bad smoothing"),
        ("sensors:\n  defaults:\n    accel: { smoothing: mode 3 }\n", 3, "sensors.defaults.accel.smoothing", "bad smoothing"),
        ("sensors:\n  defaults:\n    accel: { max_rate: 0.0000001 }\n", 3, "sensors.defaults.accel.max_rate", "bad rate"),
        ("sensors:\n  defaults:\n    accel:\n      orientation: { hysteresis: 50 }\n", 4, "sensors.defaults.accel.orientation.hysteresis", "from 0.0 to 40.0"),
        ("sensors:\n  defaults:\n    accel:\n      orientation: { flat_angle: 95 }\n", 4, "sensors.defaults.accel.orientation.flat_angle", "from 0.0 to 80.0"),
        ("sensors:\n  defaults:\n    accel:\n      orientation: maybe\n", 4, "sensors.defaults.accel.orientation", "expected on or off"),
        ("sensors:\n  defaults:\n    illuminance:\n      outliers: { confirm: off }\n", 4, "sensors.defaults.illuminance.outliers.confirm", "longer than 0"),
        ("sensors:\n  defaults:\n    illuminance:\n      outliers: on\n", 4, "sensors.defaults.illuminance.outliers", "expected off or a mapping"),
        ("sensors:\n  defaults:\n    illuminance: { colour: red }\n", 3, "sensors.defaults.illuminance.colour", "unknown key"),
        ("sensors:\n  devices:\n    - settle: 1s\n", 3, "sensors.devices[0].match", "missing"),
        ("sensors:\n  devices:\n    - match: { class: mouse }\n", 3, "sensors.devices[0].match.class", "unknown key"),
        ("sensors:\n  devices:\n    - match: { name: als }\n      channels:\n        illuminance: { max_rate: 5 }\n", 5,
         "sensors.devices[0].channels.illuminance.max_rate", "unknown key"),
        ("sensors:\n  rules: []\n", 2, "sensors.rules", "unknown key"),
    ] as [(String, Int, String, String)])
    func errors(yaml: String, line: Int, key: String, reason: String) {
        do {
            _ = try FilterConfig.parse(yaml: yaml, file: "test.yaml")
            Issue.record("no error for \(yaml)")
        } catch {
            #expect(error.line == line)
            #expect(error.key == key)
            #expect(error.reason.contains(reason), "\(error.reason)")
        }
    }

    @Test("docs/evflow.example.yaml's sensors section parses")
    func exampleFile() throws {
        let config = try FilterConfig.load(path: Fixtures.repositoryRoot.appendingPathComponent("docs/evflow.example.yaml").path)
        #expect(!config.sensors.defaults.isEmpty)
        #expect(!config.sensors.rules.isEmpty)
    }
}

extension SensorConfigTests {
    @Test("a rule's settings reach filterSensor: no settling, no phantom-zero rule for this sensor")
    func sensorFilterChain() throws {
        let baseline = LiveResources.owned
        do {
            let config = try FilterConfig.parse(yaml: """
                sensors:
                  devices:
                    - match: { name: "als" }
                      settle: off
                      outliers: off
                """)
            let scheduler = TestScheduler()
            let source = scheduler.createHotObservable([
                .next(210, SensorSample(time: 210 * ms, values: [100])),
                .next(220, SensorSample(time: 220 * ms, values: [105])),    // inside [1, 10%]
                .next(230, SensorSample(time: 230 * ms, values: [0])),      // no phantom-zero rule here
            ])
            let observer = scheduler.start {
                source.filterSensor(config.sensorSettings(for: Self.als), channels: Self.als.channels, scheduler: scheduler)
            }
            #expect(observer.elements.map(\.values) == [[100], [0]])
        }
        #expect(LiveResources.owned == baseline)
    }
}

extension SensorConfigTests {
    /// Mutations of a valid `sensors:` section either fail with a `ConfigError` or resolve to
    /// settings a filter runs with: none traps (overflowing deadlines, empty windows).
    @Test("mutated sensors sections: an error or settings that run, never a trap")
    func mutations() {
        let valid = """
            sensors:
              defaults:
                illuminance: { hysteresis: [1, 10%], settle: 500ms, outliers: { phantom_zero: on, spike: 50%, confirm: 1s } }
                accel: { max_rate: 10, smoothing: median 3, orientation: { hysteresis: 10, flat_angle: 25 } }
              devices:
                - match: { name: "als*", properties: { ID_PATH: "platform-*" } }
                  channels:
                    illuminance: { hysteresis: 5%, smoothing: mean 4 }
            """
        let alphabet = Array("0123456789.%-e:{}[], offmsnauHz\n")
        var rng = SplitMix64(seed: 22)
        var parsed = 0
        for _ in 0..<1000 {
            var chars = Array(valid)
            for _ in 0..<(1 + rng.below(3)) {
                chars[rng.below(chars.count)] = alphabet[rng.below(alphabet.count)]
            }
            guard let config = try? FilterConfig.parse(yaml: String(chars)) else { continue }
            parsed += 1
            for sensor in [Self.als, Self.accel] {
                let settings = config.sensorSettings(for: sensor)
                var filter = SensorFilter(settings: settings, channels: sensor.channels)
                var state = settings.orientation.map { OrientationState(settings: $0) }
                for i in 0..<20 {
                    let t = Int64(i) * 100 * ms
                    while let due = filter.nextDeadline, due <= t { _ = filter.fire(at: due) }
                    let values = sensor.channels.map { _ in i % 5 == 0 ? 0 : Double(i * 37 % 11) }
                    _ = filter.process(SensorSample(time: t, values: values))
                    if values.count == 3 { _ = state?.on(x: values[0], y: values[1], z: values[2]) }
                }
            }
        }
        #expect(parsed > 50, "only \(parsed) mutations parsed: the test no longer exercises resolution")
    }
}
