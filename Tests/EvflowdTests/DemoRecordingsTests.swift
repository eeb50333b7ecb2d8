import Foundation
import Testing
import InputModel
import Recording
@testable import evflowd

/// `evflowd --demo`'s recordings are data files found from the executable's path (issue #23:
/// they were 100 KB of string literals compiled into every evflowd, without their licence).
/// `Tests/Fixtures`, found from this file's place.
private let fixturesRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

@Suite("Demo recordings")
struct DemoRecordingsTests {
    /// A fresh directory, removed by `body`'s end.
    private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "evflow-demo-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    /// Copies the demo recordings (from the fixtures) into `directory`, or only the first of them.
    private func populate(_ directory: String, onlyFirst: Bool = false) throws {
        for file in onlyFirst ? [DemoRecordings.files[0]] : DemoRecordings.files {
            let target = directory + "/" + file
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: fixturesRoot.appendingPathComponent("recordings/evemu-devices/" + file).path, toPath: target)
        }
    }

    @Test("the search order: the prefix's share/evflow/demo, then a checkout's fixtures from the executable's directory up to /")
    func searchOrder() {
        #expect(DemoRecordings.searchPlaces(executablePath: "/usr/bin/evflowd") == [
            "/usr/share/evflow/demo",
            "/usr/bin/Tests/Fixtures/recordings/evemu-devices",
            "/usr/Tests/Fixtures/recordings/evemu-devices",
            "/Tests/Fixtures/recordings/evemu-devices",
        ])
        #expect(DemoRecordings.searchPlaces(executablePath: "/evflowd") == [
            "/share/evflow/demo",
            "/Tests/Fixtures/recordings/evemu-devices",
        ])
    }

    @Test("an installed evflowd finds PREFIX/share/evflow/demo, before any checkout above it")
    func installed() throws {
        try withTemporaryDirectory { root in
            try populate(root + "/prefix/share/evflow/demo")
            try populate(root + "/prefix/bin/" + DemoRecordings.checkoutDirectory)
            #expect(try DemoRecordings.locate(executablePath: root + "/prefix/bin/evflowd") == root + "/prefix/share/evflow/demo")
        }
    }

    @Test("an evflowd built in a checkout (.build/<triple>/debug) finds the checkout's fixtures")
    func checkout() throws {
        try withTemporaryDirectory { root in
            try populate(root + "/repo/" + DemoRecordings.checkoutDirectory)
            let executable = root + "/repo/.build/x86_64-unknown-linux-gnu/debug/evflowd"
            #expect(try DemoRecordings.locate(executablePath: executable) == root + "/repo/" + DemoRecordings.checkoutDirectory)
        }
    }

    @Test("a place with only some of the recordings is passed over; with none anywhere, the error names every place searched")
    func notFound() throws {
        try withTemporaryDirectory { root in
            try populate(root + "/prefix/share/evflow/demo", onlyFirst: true)
            let executable = root + "/prefix/bin/evflowd"
            let error = #expect(throws: DemoRecordings.NotFound.self) { try DemoRecordings.locate(executablePath: executable) }
            #expect(error?.searched == DemoRecordings.searchPlaces(executablePath: executable))
            for place in error?.searched ?? [] { #expect("\(error!)".contains(place)) }
        }
    }

    @Test("the recordings read: the Surface Type Cover keyboard and the Ultrathin Touch Mouse, with events")
    func read() throws {
        let repo = fixturesRoot.deletingLastPathComponent().deletingLastPathComponent().path
        let directory = try DemoRecordings.locate(executablePath: repo + "/.build/some-triple/debug/evflowd")
        let recordings = try DemoRecordings.read(from: directory)
        #expect(recordings.flatMap { $0.devices.map(\.info.name) } == ["Microsoft Surface Type Cover", "Ultrathin Touch Mouse"])
        #expect(recordings.allSatisfy { $0.eventCount > 0 })
    }
}
