import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// `holdingChanges`: the rotation hold (issue #29, item 4; iio-sensor-proxy #90 and #220),
/// pinned in virtual time (ticks of 1 ms).
@Suite("orientation hold: a rotation is published once it has lasted the hold", .ownLiveResources)
struct OrientationHoldTests {
    static func at(_ o: Orientation, _ tick: Int) -> TimedOrientation { TimedOrientation(o, at: Int64(tick) * ms) }

    /// The events of `changes` (tick, orientation) through a hold of `hold` ms.
    static func run(_ changes: [Recorded<Event<TimedOrientation>>], hold: Int64,
                    disposed: TestTime = 5000) -> [Recorded<Event<TimedOrientation>>] {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable(changes)
        return scheduler.start(disposed: disposed) { source.holdingChanges(scheduler: scheduler, hold: { hold * ms }) }.events
    }

    @Test("the default hold is 1 s, and the configuration's orientation: { hold: … } sets it")
    func defaultAndConfig() throws {
        #expect(OrientationSettings().hold == 1_000 * ms)
        let yaml = "sensors:\n  defaults:\n    accel: { orientation: { hold: 1500ms } }\n"
        let accel = SensorInfo(id: DeviceID(rawValue: "a"), name: "accel_3d", sysname: "iio:device0",
                               channels: ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) },
                               buffered: false)
        #expect(try FilterConfig.parse(yaml: yaml).sensorSettings(for: accel).orientation?.hold == 1_500 * ms)
        #expect(FilterConfig().sensorSettings(for: accel).orientation?.hold == 1_000 * ms)
        let off = "sensors:\n  defaults:\n    accel: { orientation: { hold: off } }\n"
        #expect(try FilterConfig.parse(yaml: off).sensorSettings(for: accel).orientation?.hold == 0)
        #expect(throws: ConfigError.self) {
            try FilterConfig.parse(yaml: "sensors:\n  defaults:\n    accel: { orientation: { hold: 11s } }\n")
        }
    }

    @Test("the first orientation at once; a change published exactly `hold` after it came, with that time")
    func heldChange() {
        let events = Self.run([.next(210, Self.at(.normal, 210)), .next(300, Self.at(.rightUp, 300)), .completed(2000)],
                              hold: 1000)
        #expect(events == [.next(210, Self.at(.normal, 210)), .next(1300, Self.at(.rightUp, 1300)), .completed(2000)])
    }

    @Test("a tilt and back within the hold is no rotation; a third orientation is held from its own time")
    func tiltAndBack() {
        let events = Self.run([
            .next(210, Self.at(.normal, 210)),
            .next(300, Self.at(.leftUp, 300)), .next(900, Self.at(.normal, 900)),       // back: nothing
            .next(1000, Self.at(.leftUp, 1000)), .next(1500, Self.at(.bottomUp, 1500)), // held anew at 1500
            .completed(3000),
        ], hold: 1000)
        #expect(events == [.next(210, Self.at(.normal, 210)), .next(2500, Self.at(.bottomUp, 2500)), .completed(3000)])
    }

    @Test("hold 0 passes every change at once; undefined (rule off) passes at once and the next is first again")
    func noHoldAndUndefined() {
        #expect(Self.run([.next(210, Self.at(.normal, 210)), .next(220, Self.at(.faceUp, 220))], hold: 0)
                == [.next(210, Self.at(.normal, 210)), .next(220, Self.at(.faceUp, 220))])
        let events = Self.run([
            .next(210, Self.at(.normal, 210)), .next(300, Self.at(.rightUp, 300)),
            .next(400, Self.at(.undefined, 400)), .next(500, Self.at(.leftUp, 500)),
        ], hold: 1000)
        #expect(events == [.next(210, Self.at(.normal, 210)), .next(400, Self.at(.undefined, 400)),
                           .next(500, Self.at(.leftUp, 500))])
    }

    @Test("completion drops a held change; disposal cancels its timer")
    func endings() {
        #expect(Self.run([.next(210, Self.at(.normal, 210)), .next(300, Self.at(.rightUp, 300)), .completed(400)],
                         hold: 1000)
                == [.next(210, Self.at(.normal, 210)), .completed(400)])
        // Disposed at 1000: the change held from 600 would come at 1600.
        #expect(Self.run([.next(210, Self.at(.normal, 210)), .next(600, Self.at(.rightUp, 600))], hold: 1000, disposed: 1000)
                == [.next(210, Self.at(.normal, 210))])
    }
}
