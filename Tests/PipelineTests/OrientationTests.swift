import Foundation
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// `OrientationState` and the `orientation` operator.
@Suite("orientation: accelerometer to screen orientation with hysteresis", .ownLiveResources)
struct OrientationTests {
    static let g = OrientationState.gravity

    /// The reading of a device whose "up" is at `phi` degrees in the screen plane (0 = top
    /// edge up, 90 = right edge up), leaning back `lean` degrees from upright (90 = flat,
    /// face-up; −90 = face-down): gravity, pointing down, as iio-sensor-proxy reads it.
    static func reading(phi: Double, lean: Double = 0) -> (x: Double, y: Double, z: Double) {
        let p = phi * .pi / 180, l = lean * .pi / 180
        return (-g * sin(p) * cos(l), -g * cos(p) * cos(l), -g * sin(l))
    }

    static func feed(_ state: inout OrientationState, phi: Double, lean: Double = 0) -> Orientation? {
        let r = reading(phi: phi, lean: lean)
        return state.on(x: r.x, y: r.y, z: r.z)
    }

    @Test("the first reading decides without a margin; names and axes as iio-sensor-proxy's")
    func firstReading() {
        let g = Self.g
        let cases: [((Double, Double, Double), Orientation)] = [
            ((0, -g, 0), .normal), ((0, g, 0), .bottomUp), ((-g, 0, 0), .rightUp), ((g, 0, 0), .leftUp),
            ((0, 0, -g), .faceUp), ((0, 0, g), .faceDown),
        ]
        for (r, expected) in cases {
            var state = OrientationState(settings: OrientationSettings())
            #expect(state.on(x: r.0, y: r.1, z: r.2) == expected)
            #expect(Orientation(rawValue: expected.rawValue) == expected)
        }
        #expect(Orientation.rightUp.rawValue == "right-up")
        #expect(Orientation.faceDown.rawValue == "face-down")
    }

    @Test("upright to upright: the reading must go hysteresis degrees past the 45° boundary, both ways")
    func uprightHysteresis() {
        var state = OrientationState(settings: OrientationSettings(hysteresis: 10))
        #expect(Self.feed(&state, phi: 0, lean: 30) == .normal)
        #expect(Self.feed(&state, phi: 54, lean: 30) == nil)
        #expect(Self.feed(&state, phi: 56, lean: 30) == .rightUp)
        #expect(Self.feed(&state, phi: 36, lean: 30) == nil)
        #expect(Self.feed(&state, phi: 34, lean: 30) == .normal)
        #expect(Self.feed(&state, phi: -56, lean: 30) == .leftUp)
        #expect(Self.feed(&state, phi: 170, lean: 30) == .bottomUp)
    }

    @Test("upright and flat: flat below flatAngle − h, upright again above flatAngle + h")
    func flatHysteresis() {
        var state = OrientationState(settings: OrientationSettings(hysteresis: 10, flatAngle: 25))
        #expect(Self.feed(&state, phi: 0, lean: 30) == .normal)
        #expect(Self.feed(&state, phi: 0, lean: 74) == nil)        // 16° from flat
        #expect(Self.feed(&state, phi: 0, lean: 76) == .faceUp)    // 14°
        #expect(Self.feed(&state, phi: 0, lean: 56) == nil)        // 34°
        #expect(Self.feed(&state, phi: 90, lean: 54) == .rightUp)  // 36°: the nearest upright
        #expect(Self.feed(&state, phi: 90, lean: -80) == .faceDown)
        #expect(Self.feed(&state, phi: 90, lean: 80) == .faceUp)
    }

    @Test("a reading far from 1 g (shaking, free fall) decides nothing")
    func notGravity() {
        var state = OrientationState(settings: OrientationSettings())
        #expect(state.on(x: 0, y: 2.5 * Self.g, z: 0) == nil)
        #expect(state.on(x: 0, y: 0.1, z: 0) == nil)
        #expect(state.on(x: .nan, y: Self.g, z: 0) == nil)
        #expect(state.current == .undefined)
    }

    @Test("a tablet held at 45° with noise under the hysteresis never flips; without it, it does")
    func fortyFiveDegrees() {
        var rng = SplitMix64(seed: 45)
        var held = OrientationState(settings: OrientationSettings(hysteresis: 10))
        var bare = OrientationState(settings: OrientationSettings(hysteresis: 0))
        var heldChanges = 0, bareChanges = 0
        for _ in 0..<1000 {
            let phi = 45 + rng.gaussian() * 3
            if Self.feed(&held, phi: phi, lean: 30) != nil { heldChanges += 1 }
            if Self.feed(&bare, phi: phi, lean: 30) != nil { bareChanges += 1 }
        }
        #expect(heldChanges == 1)        // the first decision only
        #expect(bareChanges > 50)
    }

    static let accel = ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) }

    @Test("operator: each change once, the mount matrix applied; completion passes through")
    func operatorChanges() {
        let baseline = LiveResources.owned
        do {
            let scheduler = TestScheduler()
            // The sensor is mounted turned: its +x is the device's +y, its +y the device's −x.
            let matrix = MountMatrix(parsing: "0, -1, 0; 1, 0, 0; 0, 0, 1")!
            let source = scheduler.createHotObservable([
                .next(210, SensorSample(time: 210 * ms, values: [-Self.g, 0, 0])),     // gravity on device −y: normal
                .next(220, SensorSample(time: 220 * ms, values: [-Self.g, -0.5, 0])),
                .next(230, SensorSample(time: 230 * ms, values: [0, Self.g, 0])),      // on device −x: right-up
                .next(240, SensorSample(time: 240 * ms, values: [0, 0, -Self.g])),     // on −z: face-up
                .completed(250),
            ])
            let observer = scheduler.start {
                source.orientation(OrientationSettings(), channels: Self.accel, mountMatrix: matrix)
            }
            #expect(observer.events == [.next(210, .normal), .next(230, .rightUp), .next(240, .faceUp), .completed(250)])
            #expect(source.subscriptions == [Subscription(200, 250)])
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("operator: a sensor without the three accel channels delivers nothing")
    func operatorWithoutAxes() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, SensorSample(time: 210 * ms, values: [Self.g, 0])), .completed(250),
        ])
        let observer = scheduler.start {
            source.orientation(OrientationSettings(), channels: Array(Self.accel.prefix(2)))
        }
        #expect(observer.events == [.completed(250)])
    }
}

extension SplitMix64 {
    /// A standard normal variate (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
