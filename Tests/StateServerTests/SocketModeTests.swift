import Foundation
import InputModel
import Reactive
import Testing
@testable import StateServer
#if canImport(Glibc)
import Glibc
#endif

/// The socket file never lets in anyone its final mode would refuse (issue #25, finding 6:
/// bound under the process umask and `chmod`ed afterwards, the socket was 0777 for a moment
/// under umask 000, and a uid 65534 client looping `connect()` was admitted in 1 of 5 starts).
@Suite(.serialized, .ownLiveResources) struct SocketModeTests {
    static let connector = #"""
    import socket, sys, time
    path, until = sys.argv[1], time.monotonic() + float(sys.argv[2])
    print("looping", flush=True)
    while time.monotonic() < until:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            s.settimeout(2)
            if b"VERSION" in s.recv(4096):
                print("admitted", flush=True)
        except OSError:
            pass
        finally:
            s.close()
    """#

    @Test(.enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0,
                   "needs root, setpriv and Debian's python3"))
    func underUmask000AnotherUserLoopingConnectIsNeverAdmitted() async throws {
        let devices = ManualDevices()
        let path = temporarySocketPath()
        let loop = Process()
        loop.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        loop.arguments = ["--reuid", "65534", "--regid", "65534", "--clear-groups",
                          "/usr/bin/python3", "-c", Self.connector, path, "5"]
        let out = Pipe()
        loop.standardOutput = out
        try loop.run()
        // Its first line says it runs (as uid 65534: a failure to start would read as
        // "never admitted").
        let first = out.fileHandleForReading.availableData
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("looping"))
        let old = umask(0)
        defer { umask(old) }
        // Start and stop the server for 4 s while the connector loops (5 s).
        let until = monotonicNow() + 4_000_000_000
        var starts = 0
        while monotonicNow() < until {
            starts += 1
            let server = StateServer(configuration: StateServerConfiguration(socketPath: path, release: "mode"),
                                     hub: devices.hub, logger: testLogger)
            try await server.start()
            var st = stat()
            #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o660)
            // Real time is the point: the socket stays up for a while each time, for the
            // connector to race against.
            try await Task.sleep(for: .milliseconds(20))
            await server.shutdown()
        }
        loop.waitUntilExit()
        let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let admitted = rest.split(separator: "\n").filter { $0 == "admitted" }.count
        #expect(admitted == 0, "uid 65534 admitted \(admitted) times in \(starts) starts")
        devices.stop()
    }
}

/// Socket paths the server cannot use are refused with the path named (issue #25, finding 8:
/// raw NIO errors such as `UnixDomainSocketPathWrongType()` without the path).
@Suite(.ownLiveResources) struct SocketPathErrorTests {
    @Test func aPathTooLongForSockaddrUnIsRefusedNamingIt() async throws {
        let devices = ManualDevices()
        let path = "/tmp/" + String(repeating: "x", count: 120)
        let server = StateServer(configuration: StateServerConfiguration(socketPath: path, release: "x"),
                                 hub: devices.hub, logger: testLogger)
        await #expect { try await server.start() } throws: { error in
            let text = "\(error)"
            return text.contains(path) && text.contains("at most 107")
        }
        await server.shutdown()
        devices.stop()
    }

    @Test func aFileThatIsNoSocketIsLeftAloneAndNamed() async throws {
        let devices = ManualDevices()
        let path = temporarySocketPath()
        #expect(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))
        defer { unlink(path) }
        let server = StateServer(configuration: StateServerConfiguration(socketPath: path, release: "x"),
                                 hub: devices.hub, logger: testLogger)
        await #expect { try await server.start() } throws: { error in
            "\(error)" == "\(path) exists and is not a socket; not replacing it"
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep")
        await server.shutdown()
        devices.stop()
    }
}

/// evflowctl says what is wrong when it cannot connect (issue #25, finding 8: "evflowd is not
/// running (… Permission denied)" while it ran).
@Suite(.ownLiveResources) struct ConnectFailureTests {
    @Test(.enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0, "needs root and setpriv"))
    func aUserTheSocketLeavesOutIsToldPermissionDeniedNotThatEvflowdIsDown() async throws {
        let devices = ManualDevices()
        let (server, path) = try await startServer(hub: devices.hub)   // 0660 root:root
        let ctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let binary = [ctl, ctl.deletingLastPathComponent()].map { $0.appendingPathComponent("evflowctl").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "evflowctl"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid", "65534", "--regid", "65534", "--clear-groups", binary, "devices", "--socket", path]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = Pipe()
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 69)
        #expect(text.contains("permission denied connecting to \(path)"), "\(text)")
        #expect(!text.contains("not running"), "\(text)")
        await server.shutdown()
        devices.stop()
    }

    @Test func aMissingSocketSaysEvflowdIsNotRunning() throws {
        let path = temporarySocketPath()
        let r = try runEvflowctl(["devices", "--socket", path])
        #expect(r.status == 69)
        #expect(r.stderr.contains("evflowd is not running (cannot connect to \(path): No such file or directory)"), "\(r.stderr)")
    }
}
