import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// An accelerometer's orientation rule follows configuration reloads, as its filters do.
@Suite("Sensor orientation reload", .ownLiveResources)
struct SensorOrientationReloadTests {
    static let accel = SensorInfo(id: DeviceID(rawValue: "iio:accel"), name: "accel_3d", sysname: "iio:device0",
                                  channels: ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) },
                                  buffered: true)

    /// A reading of gravity (pointing down) with the device tilted `tilt` degrees from flat,
    /// face-up, towards upright-normal.
    static func tilted(_ tilt: Double, at time: Int64) -> SensorSample {
        let g = OrientationState.gravity, r = tilt * Double.pi / 180
        return SensorSample(time: time, values: [0, -g * sin(r), -g * cos(r)])
    }

    @Test("new thresholds decide from the next sample, keeping the orientation; off delivers undefined; on starts again")
    func operatorFollowsUpdates() {
        let samples = PublishSubject<SensorSample>()
        let updates = PublishSubject<OrientationSettings?>()
        var seen: [Orientation] = []
        var completed = false
        let s = samples.orientation(OrientationSettings(flatAngle: 25), channels: Self.accel.channels,
                                    settingsUpdates: updates.asObservable())
            .subscribe(onNext: { seen.append($0) }, onCompleted: { completed = true })
        samples.onNext(Self.tilted(40, at: 1))   // 50° from flat: upright
        #expect(seen == [.normal])
        updates.onNext(OrientationSettings(hysteresis: 10, flatAngle: 60))
        #expect(seen == [.normal])                 // the orientation stays until a sample decides
        samples.onNext(Self.tilted(40, at: 2))   // 40° < 60° − 10°: flat now
        #expect(seen == [.normal, .faceUp])
        updates.onNext(nil)                        // orientation: off
        samples.onNext(Self.tilted(80, at: 3))
        #expect(seen == [.normal, .faceUp, .undefined])
        updates.onNext(OrientationSettings(flatAngle: 25))
        samples.onNext(Self.tilted(80, at: 4))   // decided afresh from undefined
        #expect(seen == [.normal, .faceUp, .undefined, .normal])
        samples.onCompleted()
        #expect(completed)                         // the updates do not keep it open
        s.dispose()
    }

    @Test("the configured hub applies a reload's orientation settings to a sensor being read")
    func hubReload() throws {
        let baseline = LiveResources.owned
        do {
            let yaml = { (orientation: String) in
                "sensors:\n  defaults:\n    accel: { max_rate: off, smoothing: off, orientation: \(orientation) }\n"
            }
            let scheduler = VirtualTimeScheduler()
            let hub = SensorHub(scheduler: scheduler, config: try FilterConfig.parse(yaml: yaml("{ flat_angle: 25 }")))
            let sensors = PublishSubject<SensorStream>()
            let samples = PublishSubject<SensorSample>()
            let removal = PublishSubject<Never>()
            let running = hub.run(sensors.asObservable())
            scheduler.advance(by: .zero)
            sensors.onNext(SensorStream(info: Self.accel, samples: samples.asObservable(), removal: removal.asObservable()))
            let seen = PosixLockedList()
            let watching = SensorHubTests.watch(hub, into: seen)
            scheduler.advance(by: .zero)
            func orientation(after sample: SensorSample) -> String? {
                samples.onNext(sample)
                scheduler.advance(by: .zero)
                guard case .found(let state) = hub.state(of: "accel_3d") else { return "not found" }
                return state.orientation
            }
            #expect(orientation(after: Self.tilted(40, at: 1_000_000)) == "normal")
            hub.reload(try FilterConfig.parse(yaml: yaml("{ hysteresis: 10, flat_angle: 60, hold: off }")))
            #expect(orientation(after: Self.tilted(41, at: 2_000_000)) == "face-up")
            hub.reload(try FilterConfig.parse(yaml: yaml("off")))
            #expect(orientation(after: Self.tilted(80, at: 3_000_000)) == nil)
            watching.dispose()
            running.dispose()
            scheduler.advance(by: .zero)
        }
        #expect(LiveResources.owned == baseline)
    }
}
