import Foundation
import InputModel
import Pipeline
import Testing

/// The same machine rotates the same way under evflow and iio-sensor-proxy (issue #29, item 4):
/// real convertibles' matrices from systemd's hwdb.d/60-sensor.hwdb (read as data), a raw
/// reading of the sensor, the orientation evflow decides, and iio-sensor-proxy's own rule.
@Suite("mount matrices of real machines: evflow and iio-sensor-proxy agree")
struct MountMatrixConventionTests {
    static let g = OrientationState.gravity

    /// iio-sensor-proxy's rule (its `orientation_calc`, sensorfw's), restated from its
    /// description: the angle of the reading to the screen plane on x decides portrait
    /// (beyond 35°: x > 0 left-up, else right-up), else on y landscape (y > 0 bottom-up, else
    /// normal); undefined when neither passes 35°. Enough for readings along one axis.
    static func iioSensorProxy(_ v: (x: Double, y: Double, z: Double)) -> Orientation {
        let degrees = 180 / Double.pi
        let portrait = atan2(v.x, (v.y * v.y + v.z * v.z).squareRoot()) * degrees
        let landscape = atan2(v.y, (v.x * v.x + v.z * v.z).squareRoot()) * degrees
        if abs(portrait) > 35 { return portrait > 0 ? .leftUp : .rightUp }
        if abs(landscape) > 35 { return landscape > 0 ? .bottomUp : .normal }
        return .undefined
    }

    /// (machine, its hwdb ACCEL_MOUNT_MATRIX, the raw reading in g, the orientation).
    static let table: [(String, String, (Double, Double, Double), Orientation)] = [
        ("Asus T100TA (INVN6500)", "1, 0, 0; 0, -1, 0; 0, 0, 1", (0, 1, 0), .normal),
        ("Asus T100TA (INVN6500)", "1, 0, 0; 0, -1, 0; 0, 0, 1", (1, 0, 0), .leftUp),
        ("Acer Aspire SW3-016 (KIOX0009)", "0, -1, 0; -1, 0, 0; 0, 0, -1", (1, 0, 0), .normal),
        ("Acer Aspire SW3-016 (KIOX0009)", "0, -1, 0; -1, 0, 0; 0, 0, -1", (0, 1, 0), .rightUp),
        ("Acer Aspire SW3-016 (KIOX0009)", "0, -1, 0; -1, 0, 0; 0, 0, -1", (0, 0, 1), .faceUp),
        ("Asus TP412UA (BOSC0200)", "0, -1, 0; 1, 0, 0; 0, 0, 1", (-1, 0, 0), .normal),
        ("Asus TP412UA (BOSC0200)", "0, -1, 0; 1, 0, 0; 0, 0, 1", (0, 1, 0), .rightUp),
        ("Asus TP412UA (BOSC0200)", "0, -1, 0; 1, 0, 0; 0, 0, 1", (1, 0, 0), .bottomUp),
        ("Chuwi Hi10 X1 (NSA2513)", "0, 1, 0; -1, 0, 0; 0, 0, 1", (1, 0, 0), .normal),
        ("Chuwi Hi10 X1 (NSA2513)", "0, 1, 0; -1, 0, 0; 0, 0, 1", (0, 1, 0), .leftUp),
        ("AYANEO NEXT (BMI0160)", "0, -1, 0; 0, 0, -1; 1, 0, 0", (0, 0, 1), .normal),
        ("AYANEO NEXT (BMI0160)", "0, -1, 0; 0, 0, -1; 1, 0, 0", (0, -1, 0), .leftUp),
        ("AYANEO NEXT (BMI0160)", "0, -1, 0; 0, 0, -1; 1, 0, 0", (1, 0, 0), .faceDown),
        ("no matrix (identity)", "1, 0, 0; 0, 1, 0; 0, 0, 1", (0, -1, 0), .normal),
    ]

    @Test("matrix and raw reading give the orientation; upright ones as iio-sensor-proxy decides them")
    func hwdbMachines() throws {
        for (machine, text, raw, expected) in Self.table {
            let matrix = try #require(MountMatrix(parsing: text), "\(machine)")
            let device = matrix.apply((raw.0 * Self.g, raw.1 * Self.g, raw.2 * Self.g))
            var state = OrientationState(settings: OrientationSettings())
            #expect(state.on(x: device.x, y: device.y, z: device.z) == expected, "\(machine) reading \(raw)")
            if expected != .faceUp && expected != .faceDown {
                #expect(Self.iioSensorProxy(device) == expected, "\(machine): iio-sensor-proxy's rule")
            } else {
                #expect(Self.iioSensorProxy(device) == .undefined, "\(machine): flat is no orientation to it")
            }
        }
    }

    @Test("the precedence of iio-sensor-proxy: udev's ACCEL_MOUNT_MATRIX, mount_matrix, in_accel_mount_matrix, in_mount_matrix")
    func precedence() throws {
        let hwdb = "0, -1, 0; 1, 0, 0; 0, 0, 1"
        let kernel = "1, 0, 0; 0, -1, 0; 0, 0, 1"
        let accel = "-1, 0, 0; 0, 1, 0; 0, 0, 1"
        let resolve = { (texts: [MountMatrix.Source: String]) in MountMatrix.resolve(texts).map { ($0.matrix.rows, $0.source) } }
        #expect(resolve([.udev: hwdb, .mountMatrix: kernel, .accelMountMatrix: accel])! == (MountMatrix(parsing: hwdb)!.rows, .udev))
        #expect(resolve([.mountMatrix: kernel, .accelMountMatrix: accel])! == (MountMatrix(parsing: kernel)!.rows, .mountMatrix))
        #expect(resolve([.accelMountMatrix: accel, .inMountMatrix: kernel])! == (MountMatrix(parsing: accel)!.rows, .accelMountMatrix))
        #expect(resolve([.inMountMatrix: kernel])! == (MountMatrix(parsing: kernel)!.rows, .inMountMatrix))
        // A source that does not parse, or has an axis of zeros, is passed over.
        #expect(resolve([.udev: "garbage", .accelMountMatrix: accel])?.1 == .accelMountMatrix)
        #expect(resolve([.udev: "0, 0, 0; 0, 1, 0; 0, 0, 1", .accelMountMatrix: accel])?.1 == .accelMountMatrix)
        // An empty one is the identity, and wins (a local hwdb entry undoing a wrong kernel matrix).
        #expect(resolve([.udev: "", .accelMountMatrix: accel])! == (MountMatrix.identity.rows, .udev))
        #expect(MountMatrix.resolve([:]) == nil)
    }
}
