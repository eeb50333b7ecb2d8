import InputModel
import Reactive

#if canImport(Glibc)
import Glibc
#endif

/// Which side of the device is up, with iio-sensor-proxy's names and its axis convention:
/// `x` points to the right edge of the screen, `y` to its top edge, `z` out of the screen
/// (after the mount matrix), and a reading at rest is gravity, pointing down: a device upright
/// in its normal orientation reads `y ≈ −9.8`, turned with its right edge up `x ≈ −9.8`,
/// lying face-up `z ≈ −9.8`. iio-sensor-proxy's rule (`orientation_calc`) calls `y > 0`
/// bottom-up and `x > 0` left-up, so with this convention the same machine, with the same
/// matrix (the hwdb's, written for iio-sensor-proxy), rotates the same way under both.
public enum Orientation: String, Hashable, Sendable, Codable, CaseIterable {
    /// Not known yet (no sample, or none clear enough).
    case undefined
    /// The top edge up (gravity along `−y`).
    case normal
    /// The bottom edge up (gravity along `+y`).
    case bottomUp = "bottom-up"
    /// The left edge up (gravity along `+x`).
    case leftUp = "left-up"
    /// The right edge up (gravity along `−x`).
    case rightUp = "right-up"
    /// Lying flat, screen up (gravity along `−z`).
    case faceUp = "face-up"
    /// Lying flat, screen down (gravity along `+z`).
    case faceDown = "face-down"

    /// The in-plane angle of an upright orientation's "up" in degrees (`atan2(x, y)`), nil for
    /// the flat ones and `undefined`.
    var centre: Double? {
        switch self {
        case .normal: 0
        case .rightUp: 90
        case .bottomUp: 180
        case .leftUp: -90
        case .faceUp, .faceDown, .undefined: nil
        }
    }
}

/// The orientation rule's parameters.
public struct OrientationSettings: Hashable, Sendable {
    /// Degrees a reading must go past a boundary before the orientation changes.
    public var hysteresis: Double
    /// The device is flat (face-up / face-down) when gravity is within this many degrees of
    /// its `z` axis.
    public var flatAngle: Double
    /// Readings whose magnitude differs from standard gravity by more than this fraction
    /// (shaking, free fall) decide nothing.
    public var gravityTolerance: Double
    /// Nanoseconds a new orientation must last before it is published (`holdingChanges`;
    /// 0: at once). Default 1 s: the shorter of the "1 or 1.5 s" iio-sensor-proxy's issue #90
    /// asks for, so a laptop tilted for a moment does not rotate.
    public var hold: Int64

    /// Settings; the defaults are evflow's (see docs/sensors.md, "Orientation").
    public init(hysteresis: Double = 10, flatAngle: Double = 25, gravityTolerance: Double = 0.4,
                hold: Int64 = OrientationSettings.defaultHold) {
        self.hysteresis = hysteresis
        self.flatAngle = flatAngle
        self.gravityTolerance = gravityTolerance
        self.hold = hold
    }

    /// The default `hold`: 1 s.
    public static let defaultHold: Int64 = 1_000_000_000
}

/// Derives the orientation from accelerometer readings (in m/s², device axes) with
/// hysteresis. Pure; no time: it changes only on readings.
///
/// A reading is gravity (see `Orientation`); "up" is its opposite, `(x, y, z) = −reading`.
/// For that vector with magnitude `g`:
/// - `tilt` = the angle between gravity and the screen's normal, `acos(|z| / g)` in degrees
///   (0 = flat), and `φ = atan2(x, y)` in degrees, the direction of "up" in the screen plane
///   (0 normal, 90 right-up, ±180 bottom-up, −90 left-up).
/// - Regions: flat when `tilt < flatAngle` (face-up for `z > 0`, face-down otherwise);
///   otherwise the upright orientation whose centre is nearest `φ` (sectors of 90° centred
///   on 0, 90, 180, −90: boundaries at ±45° and ±135°).
/// - From **undefined** the reading's region is taken as it is. From any other orientation,
///   a change needs the reading `hysteresis` degrees inside another region: upright → flat
///   when `tilt < flatAngle − hysteresis`; flat → upright when `tilt > flatAngle +
///   hysteresis`; upright → another upright when `φ` is more than `45 + hysteresis` degrees
///   from the current centre; face-up ↔ face-down when flat by the same margin on the other
///   side. Between the margins the orientation stays.
/// - A reading with `|g − 9.80665| > gravityTolerance · 9.80665` is ignored (the device is
///   moving; gravity's direction is not known).
///
/// So a tablet held at 45° between two orientations, with noise under `hysteresis`, keeps the
/// one it had. iio-sensor-proxy's rule (sensorfw's) instead tests the portrait axis first
/// against a fixed 35° threshold, with no margin between landscape and portrait, so near the
/// diagonal each noisy reading can decide anew.
public struct OrientationState: Hashable, Sendable {
    /// The rule's parameters.
    public private(set) var settings: OrientationSettings
    /// The current orientation.
    public private(set) var current: Orientation = .undefined

    /// A state with `settings`, orientation undefined.
    public init(settings: OrientationSettings) {
        self.settings = settings
    }

    /// New parameters (configuration reload): the orientation stays what it is, and the new
    /// thresholds decide from the next reading on.
    public mutating func configure(_ settings: OrientationSettings) {
        self.settings = settings
    }

    /// Standard gravity, m/s².
    public static let gravity = 9.80665

    /// One reading; returns the new orientation if it changed.
    public mutating func on(x readX: Double, y readY: Double, z readZ: Double) -> Orientation? {
        // The reading is gravity, pointing down (iio-sensor-proxy's convention); the rule below
        // reasons about "up".
        let x = -readX, y = -readY, z = -readZ
        let g = (x * x + y * y + z * z).squareRoot()
        guard g.isFinite, abs(g - Self.gravity) <= settings.gravityTolerance * Self.gravity else { return nil }
        let degrees = 180 / Double.pi
        let tilt = acos(min(abs(z) / g, 1)) * degrees
        let phi = atan2(x, y) * degrees
        let h = current == .undefined ? 0 : settings.hysteresis
        let flatSide: Orientation = z > 0 ? .faceUp : .faceDown
        var next = current
        switch current {
        case .faceUp, .faceDown:
            if tilt > settings.flatAngle + h {
                next = Self.nearestUpright(phi)
            } else if flatSide != current && tilt < settings.flatAngle - h {
                next = flatSide
            }
        case .undefined:
            next = tilt < settings.flatAngle ? flatSide : Self.nearestUpright(phi)
        case .normal, .bottomUp, .leftUp, .rightUp:
            if tilt < settings.flatAngle - h {
                next = flatSide
            } else if Self.distance(phi, current.centre!) > 45 + h {
                next = Self.nearestUpright(phi)
            }
        }
        guard next != current else { return nil }
        current = next
        return next
    }

    /// The absolute difference of two angles in degrees, 0…180.
    static func distance(_ a: Double, _ b: Double) -> Double {
        var d = (a - b).truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        return d > 180 ? 360 - d : d
    }

    static func nearestUpright(_ phi: Double) -> Orientation {
        let candidates: [Orientation] = [.normal, .rightUp, .bottomUp, .leftUp]
        return candidates.min { distance(phi, $0.centre!) < distance(phi, $1.centre!) }!
    }
}

extension ObservableType where Element == SensorSample {
    /// The orientation of an accelerometer's device, from its samples (`OrientationState`):
    /// each change is delivered once, the first determined orientation included.
    ///
    /// - `channels`: the sensor's channels; `accel_x`, `accel_y` and `accel_z` are read (a
    ///   sensor without all three delivers nothing).
    /// - `mountMatrix`: the sensor's mount matrix (`SensorInfo.mountMatrix`: udev's or sysfs'),
    ///   applied first: `device = matrix × sensor`.
    /// - Chain it after `filterSensor` to decide on the smoothed, rate-limited levels.
    /// - Completion, error and disposal pass through; it keeps no timer.
    public func orientation(_ settings: OrientationSettings, channels: [SensorChannel],
                            mountMatrix: MountMatrix = .identity) -> Observable<Orientation> {
        orientation(settings, channels: channels, mountMatrix: mountMatrix, settingsUpdates: .never())
    }

    /// `orientation(_:channels:mountMatrix:)` following a configuration: `settings` nil is
    /// off (nothing decided), and each of `settingsUpdates` (a reload, delivered on the samples'
    /// thread, between samples) takes effect at once: new settings keep the orientation and
    /// decide from the next sample on (`OrientationState.configure`); nil turns the rule off,
    /// delivering `.undefined` once if an orientation had been delivered; settings after off
    /// start again from undefined. The updates' subscription ends with the samples.
    public func orientation(_ settings: OrientationSettings?, channels: [SensorChannel],
                            mountMatrix: MountMatrix = .identity,
                            settingsUpdates: Observable<OrientationSettings?>) -> Observable<Orientation> {
        let index = { (name: String) in channels.firstIndex { $0.name == name } }
        guard let ix = index("accel_x"), let iy = index("accel_y"), let iz = index("accel_z") else {
            return asObservable().compactMap { _ in nil }
        }
        let source = asObservable()
        return Observable<OrientationInput>.deferred {
            // Per subscription: the samples' end also ends the updates', so the result completes.
            let ended = PublishSubject<Void>()
            return Observable.merge(
                source.do(onError: { _ in ended.onNext(()) }, onCompleted: { ended.onNext(()) }).map(OrientationInput.sample),
                settingsUpdates.takeUntil(ended).map(OrientationInput.configure))
        }
        .scan(into: (state: settings.map(OrientationState.init), changed: Orientation?.none)) { acc, input in
            acc.changed = nil
            switch input {
            case .configure(nil):
                if let current = acc.state?.current, current != .undefined { acc.changed = .undefined }
                acc.state = nil
            case .configure(let new?):
                if acc.state == nil { acc.state = OrientationState(settings: new) } else { acc.state!.configure(new) }
            case .sample(let sample):
                guard acc.state != nil, sample.values.count == channels.count else { return }
                let v = mountMatrix.apply((sample.values[ix], sample.values[iy], sample.values[iz]))
                acc.changed = acc.state!.on(x: v.x, y: v.y, z: v.z)
            }
        }
        .compactMap { $0.changed }
    }
}

/// What `orientation(_:channels:mountMatrix:settingsUpdates:)` handles, in order.
private enum OrientationInput {
    case sample(SensorSample)
    case configure(OrientationSettings?)
}
