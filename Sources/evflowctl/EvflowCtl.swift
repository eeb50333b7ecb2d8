import ArgumentParser
import Foundation
import InputModel
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// evflowctl: queries and watches evflowd over its socket; analyses recordings.
@main
struct EvflowCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evflowctl",
        abstract: "Query and watch evflowd, record devices, analyse recordings.",
        discussion: """
        Exit codes: 0 success, 64 usage, 65 evflowd answered with an error, 69 evflowd is \
        not running (or refused the connection), 74 a file could not be read or written.
        """,
        subcommands: [Devices.self, State.self, Watch.self, Stats.self, Record.self, Analyze.self])
}

/// Options every daemon command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "evflowd's socket (default $EVFLOW_SOCKET or /run/evflow/evflowd.sock).")
    var socket: String?

    @Flag(name: .long, help: "Print the daemon's JSON replies, one per line, instead of tables.")
    var json = false

    /// The socket path: option, then environment, then the default.
    var socketPath: String {
        socket ?? ProcessInfo.processInfo.environment["EVFLOW_SOCKET"] ?? "/run/evflow/evflowd.sock"
    }
}

/// Runs a command body, turning `CtlFailure` into its message and exit code.
func runReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as CtlFailure {
        FileHandle.standardError.write(Data("evflowctl: \(failure.description)\n".utf8))
        throw ExitCode(failure.code)
    }
}

/// Prints a reply as one compact JSON line.
func printJSON(_ object: [String: Any]) {
    if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
        print(String(decoding: data, as: UTF8.self))
    }
}

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List input devices.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(["class": "DEVICES"])
            if global.json { printJSON(reply) } else { print(Render.devices(reply), terminator: "") }
        }
    }
}

struct State: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one device's current state.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id or exact name.") var device: String

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(["class": "STATE", "device": device])
            if global.json { printJSON(reply) } else { print(Render.state(reply), terminator: "") }
        }
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show server statistics.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(["class": "STATS"])
            if global.json { printJSON(reply) } else { print(Render.stats(reply), terminator: "") }
        }
    }
}

/// Set by SIGINT/SIGTERM so streaming commands can finish cleanly (record writes its file).
nonisolated(unsafe) var stopRequested: sig_atomic_t = 0

func installStopHandlers() {
    signal(SIGINT) { _ in stopRequested = 1 }
    signal(SIGTERM) { _ in stopRequested = 1 }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stream events (Ctrl-C stops).")
    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Device id, class (keyboard, mouse, ...) or exact name; repeatable.") var device: [String] = []
    @Option(name: .long, help: "Event type to pass (EV_KEY or a number); repeatable.") var type: [String] = []
    @Option(name: .long, help: "Event code to pass (KEY_A or TYPE:CODE); repeatable.") var code: [String] = []
    @Flag(name: .long, help: "The raw stream (before the noise filters).") var raw = false
    @Option(name: .long, help: "At most this many messages per second.") var maxRate: Double?
    @Option(name: .long, help: "Stop after this many stream messages.") var count: Int?

    /// The `WATCH` request for the options.
    func request() -> [String: Any] {
        var r: [String: Any] = ["class": "WATCH", "id": "evflowctl"]
        if !device.isEmpty { r["devices"] = device }
        if !type.isEmpty { r["types"] = type.map { t -> Any in Int(t).map { $0 as Any } ?? t } }
        if !code.isEmpty { r["codes"] = code }
        if raw { r["stream"] = "raw" }
        if let maxRate { r["max_rate"] = maxRate }
        return r
    }

    func run() throws {
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            let reply = try client.request(request())
            if !global.json {
                let matched = reply["matched"] as? [String] ?? []
                FileHandle.standardError.write(Data("watching \(matched.count) device(s)\n".utf8))
            }
            installStopHandlers()
            var seen = 0
            while stopRequested == 0, count.map({ seen < $0 }) ?? true {
                guard let m = try client.readMessage(timeoutMillis: 200) else {
                    throw CtlFailure.unavailable("evflowd closed the connection")
                }
                if m.isEmpty { continue }
                if m["class"] as? String == "CLOSE" {
                    throw CtlFailure.unavailable("evflowd closed the connection: \(m["message"] as? String ?? "")")
                }
                seen += 1
                if global.json { printJSON(m) } else { print(Render.streamLine(m)) }
                fflush(nil)   // all streams: `stdout` is not concurrency-safe to name
            }
        }
    }
}

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a device's raw events as an evemu file (Ctrl-C stops).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id or exact name.") var device: String
    @Option(name: .shortAndLong, help: "Output file (default: standard output).") var output: String?
    @Option(name: .long, help: "Stop after this many frames.") var count: Int?

    func run() throws {
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            let state = try client.request(["class": "STATE", "device": device])
            let info = DeviceDescription.info(from: state["device"] as? [String: Any] ?? [:])
            _ = try client.request(["class": "WATCH", "devices": [info.id.rawValue], "stream": "raw", "id": "evflowctl-record"])
            FileHandle.standardError.write(Data("recording \(info.name) (\(info.id)); Ctrl-C to stop\n".utf8))
            installStopHandlers()
            var events: [InputEvent] = []
            var frames = 0
            loop: while stopRequested == 0, count.map({ frames < $0 }) ?? true {
                guard let m = try client.readMessage(timeoutMillis: 200) else { break }
                switch m["class"] as? String {
                case "FRAME":
                    guard let time = Render.int(m["time"]) else { continue }
                    for e in m["events"] as? [[String: Any]] ?? [] {
                        guard let t = e["type"].flatMap(DeviceDescription.type),
                              let c = e["code"].flatMap({ DeviceDescription.code($0, type: t) }) else { continue }
                        events.append(InputEvent(time: Render.int(e["time"]) ?? time, type: t, code: c,
                                                 value: Int32(truncatingIfNeeded: Render.int(e["value"]) ?? 0)))
                    }
                    events.append(InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0))
                    frames += 1
                case "DEVICE" where m["action"] as? String == "removed":
                    break loop
                case "CLOSE":
                    break loop
                default:
                    continue
                }
            }
            // Times relative to the first event, as evemu-record writes them.
            let origin = events.first?.time ?? 0
            for i in events.indices { events[i].time -= origin }
            let bytes = EvemuWriter.write(RecordedDevice(info: info, events: events))
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    throw CtlFailure.io("cannot write \(output)")
                }
                FileHandle.standardError.write(Data("\(frames) frame(s) written to \(output)\n".utf8))
            } else {
                FileHandle.standardOutput.write(Data(bytes))
            }
        }
    }
}
