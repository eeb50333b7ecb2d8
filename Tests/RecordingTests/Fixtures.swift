import Foundation

/// Test fixtures, found from this source file's location (no SwiftPM resources needed).
enum Fixtures {
    /// `Tests/Fixtures`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // RecordingTests
        .deletingLastPathComponent()   // Tests
        .appendingPathComponent("Fixtures")

    /// A file under `Tests/Fixtures`, e.g. `recordings/evemu-devices/mice/PS2 Generic Mouse.events`.
    static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }

    /// A recording copied from real hardware (`Tests/Fixtures/recordings/evemu-devices/...`).
    static func evemu(_ relativePath: String) -> URL {
        url("recordings/evemu-devices/" + relativePath)
    }
}
