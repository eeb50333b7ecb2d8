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
    /// trailing newline allowed); nil when it is not three rows of three numbers.
    public init?(parsing text: String) {
        let rows = text.split(separator: ";", omittingEmptySubsequences: false).map { row in
            row.split(separator: ",", omittingEmptySubsequences: false).map {
                Double($0.trimmingCharacters(in: " \t\n"))
            }
        }
        guard rows.allSatisfy({ $0.allSatisfy { $0 != nil } }) else { return nil }
        self.init(rows: rows.map { $0.map { $0! } })
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
