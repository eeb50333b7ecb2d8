import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// evflowd as systemd runs it: the built executable, replaying a fixture into a temporary
// socket, stopped and reloaded with signals. The binary sits next to the test bundle.

private let evflowd: URL = {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [dir, dir.deletingLastPathComponent()].map { $0.appendingPathComponent("evflowd") }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
}()

private let keyboardFixture = ServerFixtures.root
    .appendingPathComponent("recordings/evemu-devices/misc/Microsoft Surface Type Cover.events").path

/// One evflowd process with its stderr (the log) collected in a file.
private final class Daemon: @unchecked Sendable {
    let process = Process()
    let logURL: URL

    init(_ arguments: [String]) throws {
        logURL = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("evflowd-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.executableURL = evflowd
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = nil
        env["LISTEN_FDS"] = nil
        env["LISTEN_PID"] = nil
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: logURL)
        try process.run()
    }

    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    func wait(timeout: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            return nil
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logURL)
    }
}

private func waitForSocket(_ path: String, timeout: Double = 20) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if let c = try? TestClient(path: path), (try? c.read()) != nil { return true }
        usleep(50_000)
    }
    return false
}

@Suite(.serialized)
struct EvflowdProcessTests {
    @Test("SIGTERM: clean exit, socket file removed")
    func sigtermRemovesTheSocket() throws {
        let path = temporarySocketPath()
        let daemon = try Daemon(["--replay", keyboardFixture, "--loop", "--socket", path])
        #expect(waitForSocket(path), "evflowd did not listen; log:\n\(daemon.log)")
        let client = try TestClient(path: path)
        _ = try client.read()   // greeting
        let devices = try client.request(#"{"class":"DEVICES"}"#)["devices"] as? [[String: Any]]
        #expect(devices?.first?["name"] as? String == "Microsoft Surface Type Cover")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0, "log:\n\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(daemon.log.contains("input stopped: all device sessions disposed"))
    }

    @Test("SIGHUP reloads the configuration and keeps device state; a bad file keeps the old one")
    func sighupReloads() throws {
        let path = temporarySocketPath()
        let config = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("evflow-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: config) }
        try "version: 1\ndefaults:\n  keys: 15ms\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try Daemon(["--replay", keyboardFixture, "--loop", "--speed", "1", "--socket", path,
                                 "--config", config.path])
        #expect(waitForSocket(path), "evflowd did not listen; log:\n\(daemon.log)")
        let client = try TestClient(path: path)
        _ = try client.read()
        let id = try #require((try client.request(#"{"class":"DEVICES"}"#)["devices"] as? [[String: Any]])?.first?["id"] as? String)
        // Let some frames through, then reload.
        usleep(1_500_000)
        let before = try client.request(#"{"class":"STATE","device":"\#(id)"}"#)
        try "version: 1\ndefaults:\n  keys: 40ms\n".write(to: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        var reloaded = false
        for _ in 0..<100 where !reloaded {
            usleep(50_000)
            reloaded = daemon.log.contains("configuration reloaded")
        }
        #expect(reloaded, "log:\n\(daemon.log)")
        let after = try client.request(#"{"class":"STATE","device":"\#(id)"}"#)
        // The same session: counters went on from where they were instead of starting again.
        let framesBefore = ((before["counters"] as? [String: Any])?["frames_in"] as? Int) ?? -1
        let framesAfter = ((after["counters"] as? [String: Any])?["frames_in"] as? Int) ?? -1
        #expect(framesBefore > 0, "\(before)")
        #expect(framesAfter >= framesBefore, "before \(before)\nafter \(after)")

        try "version: 1\ndefaults:\n  keys: soon\n".write(to: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        var refused = false
        for _ in 0..<100 where !refused {
            usleep(50_000)
            refused = daemon.log.contains("reload failed, keeping the previous configuration")
        }
        #expect(refused, "log:\n\(daemon.log)")
        #expect(daemon.log.contains("defaults.keys"), "the error names the key; log:\n\(daemon.log)")
        #expect(daemon.process.isRunning)
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test("a malformed recording: the file, line and reason, exit 65, nothing started")
    func malformedRecording() throws {
        let bad = ServerFixtures.root.appendingPathComponent("malformed/bad-hex.evemu").path
        let path = temporarySocketPath()
        let daemon = try Daemon(["--replay", bad, "--socket", path])
        #expect(daemon.wait() == 65)
        #expect(daemon.log.contains("bad-hex.evemu:"), "log:\n\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("--check-config names the bad key and exits 78")
    func checkConfig() throws {
        let config = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("evflow-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: config) }
        try "version: 1\ndevices:\n  - match: { class: toaster }\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try Daemon(["--check-config", "--config", config.path])
        #expect(daemon.wait() == 78)
        #expect(daemon.log.contains("devices[0].match.class"), "log:\n\(daemon.log)")
    }
}
