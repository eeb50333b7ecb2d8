/// The rotation from a sensor's axes to the device's (`in_accel_mount_matrix`,
/// Documentation/ABI/testing/sysfs-bus-iio): `device = matrix × sensor`, rows of three.
///
/// The kernel writes it as three rows separated by `;`, each three numbers separated by `,`:
/// `"0, 1, 0; -1, 0, 0; 0, 0, 1"`. The identity means the sensor is mounted as the device's
/// axes are (x to the right, y up, z out of the screen).
public struct MountMatrix: Hashable, Sendable, Codable {
    /// Row-major: `rows[0]` gives the device's x from the sensor's (x, y, z).
    public var rows: [[Double]]

    /// A matrix of three rows of three.
    public init?(rows: [[Double]]) {
        guard rows.count == 3, rows.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isFinite) }) else { return nil }
        self.rows = rows
    }

    /// The identity: the sensor's axes are the device's.
    public static let identity = MountMatrix(rows: [[1, 0, 0], [0, 1, 0], [0, 0, 1]])!

    /// Parses the kernel's text (`"1, 0, 0; 0, 1, 0; 0, 0, 1"`, surrounding space and a
    /// trailing newline allowed); nil when it is not three rows of three numbers, or when a
    /// row is all zeros (that axis would read nothing; iio-sensor-proxy refuses it too).
    public init?(parsing text: String) {
        let rows = text.split(separator: ";", omittingEmptySubsequences: false).map { row in
            row.split(separator: ",", omittingEmptySubsequences: false).map {
                Double($0.trimmingCharacters(in: " \t\n"))
            }
        }
        guard rows.allSatisfy({ $0.allSatisfy { $0 != nil } }) else { return nil }
        guard !rows.contains(where: { $0.allSatisfy { $0 == 0 } }) else { return nil }
        self.init(rows: rows.map { $0.map { $0! } })
    }

    /// Where a mount matrix can come from, in iio-sensor-proxy's order of precedence
    /// (its `setup_mount_matrix`): udev's property first — the hwdb's
    /// `ACCEL_MOUNT_MATRIX` (systemd's 60-sensor.hwdb), which corrects machines whose
    /// firmware describes the sensor wrongly — then the kernel's attributes.
    public enum Source: String, Hashable, Sendable, Codable, CaseIterable {
        /// The udev property `ACCEL_MOUNT_MATRIX` (from the hwdb, or a local rule).
        case udev = "ACCEL_MOUNT_MATRIX"
        /// The device-wide sysfs `mount_matrix`.
        case mountMatrix = "mount_matrix"
        /// The accelerometer's own sysfs `in_accel_mount_matrix` (a device with several
        /// sensors has one per type).
        case accelMountMatrix = "in_accel_mount_matrix"
        /// The sysfs `in_mount_matrix`.
        case inMountMatrix = "in_mount_matrix"
    }

    /// The matrix the first usable source gives, and that source: sources are tried in
    /// `Source` order, a missing one or one that does not parse is passed over, and an empty
    /// text means the identity (as iio-sensor-proxy reads it, so `ACCEL_MOUNT_MATRIX=` in a
    /// local hwdb file resets a wrong kernel matrix). Nil when no source has one.
    public static func resolve(_ texts: [Source: String]) -> (matrix: MountMatrix, source: Source)? {
        for source in Source.allCases {
            guard let text = texts[source] else { continue }
            if text[...].trimmingCharacters(in: " \t\n").isEmpty { return (.identity, source) }
            if let matrix = MountMatrix(parsing: text) { return (matrix, source) }
        }
        return nil
    }

    /// `self × vector`: a sensor reading (x, y, z) in the device's axes.
    public func apply(_ vector: (x: Double, y: Double, z: Double)) -> (x: Double, y: Double, z: Double) {
        func row(_ r: [Double]) -> Double { r[0] * vector.x + r[1] * vector.y + r[2] * vector.z }
        return (row(rows[0]), row(rows[1]), row(rows[2]))
    }
}

extension Substring {
    /// Without the leading and trailing characters in `set` (no Foundation here).
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self[...]
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return s
    }
}
