import ArgumentParser
import EvflowProtocol
import Foundation
import InputModel
import OptionValues
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
        subcommands: [Devices.self, State.self, Watch.self, Stats.self, Metrics.self, Latency.self, Record.self, Convert.self,
                      Analyze.self, Top.self, Accessibility.self])
}

/// Options every daemon command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "evflowd's socket (default $EVFLOW_SOCKET or /run/evflow/evflowd.sock).")
    var socket: String?

    @Flag(name: .long, help: "Print the daemon's JSON replies, one per line, instead of tables.")
    var json = false

    /// The socket path: option, then environment, then the default.
    var socketPath: String { Self.socketPath(socket) }

    /// The socket path for a `--socket` option: it, then the environment, then the default.
    static func socketPath(_ option: String?) -> String {
        option ?? ProcessInfo.processInfo.environment["EVFLOW_SOCKET"] ?? "/run/evflow/evflowd.sock"
    }
}

/// Runs a command body, turning `CtlFailure` into its message and exit code.
func runReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as CtlFailure {
        writeNote("evflowctl: \(failure.description)")
        throw ExitCode(failure.code)
    }
}

/// Prints a reply as the daemon sent it: one compact JSON line.
func printJSON(_ reply: Reply) {
    print(reply.line)
}

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List input devices and sensors.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(Request(.devices))
            guard case .devices(let devices, let sensors, _) = reply.message else { throw CtlFailure.protocolError("unexpected reply") }
            if global.json { printJSON(reply); return }
            print(Render.devices(devices).text, terminator: "")
            if !sensors.isEmpty { print("\n" + Render.sensors(sensors).text, terminator: "") }
        }
    }
}

struct State: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one device's or sensor's current state.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device or sensor id, or exact name.") var device: String

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(Request(.state(device: device)))
            if global.json { printJSON(reply); return }
            switch reply.message {
            case .state(let report, _): print(Render.state(report).text, terminator: "")
            case .sensorState(let report, _): print(Render.sensorState(report).text, terminator: "")
            default: throw CtlFailure.protocolError("unexpected reply")
            }
        }
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show server statistics.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(Request(.stats))
            guard case .stats(let stats, _) = reply.message else { throw CtlFailure.protocolError("unexpected reply") }
            if global.json { printJSON(reply) } else { print(Render.stats(stats).text, terminator: "") }
        }
    }
}

struct Metrics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print evflowd's metrics in Prometheus' text format.",
        discussion: """
        With -o the text replaces FILE atomically (written beside it, then renamed), as         node_exporter's textfile collector needs: a scrape never reads half a file.
        """)
    @OptionGroup var global: GlobalOptions
    @Option(name: .shortAndLong, help: "Write to this file (atomically) instead of standard output.") var output: String?

    func run() throws {
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(Request(.metrics))
            guard case .metrics(let text, let format, _) = reply.message else {
                throw CtlFailure.protocolError("unexpected reply")
            }
            guard format == MetricsFormat.prometheusText else {
                throw CtlFailure.protocolError("metrics in an unknown format '\(format)'")
            }
            if global.json { printJSON(reply); return }
            guard let output else {
                // The daemon escapes its labels; an older one did not escape ids: lines kept, controls written out.
                print(TerminalText(escapingLines: text).text, terminator: "")
                return
            }
            try writeAtomically(Array(text.utf8), to: output)
        }
    }
}

struct Latency: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show where a frame's milliseconds go: its age at each stage, per device.",
        discussion: """
        Stages: read (out of the device), filtered (out of the noise filter, state stored), \
        sent (written to a client's socket). Each is the time since the kernel stamped the \
        frame, as p50/p90/p99/p99.9/max over every frame since evflowd started (per device: \
        while it is present). docs/protocol.md, LATENCY.
        """)
    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Only this device (id or exact name).") var device: String?
    @Flag(name: .long, help: "Redraw every second until Ctrl-C.") var watch = false

    func run() throws {
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            installStopHandlers()
            repeat {
                let reply = try client.request(Request(.latency))
                guard case .latency(let report, _) = reply.message else { throw CtlFailure.protocolError("unexpected reply") }
                if global.json {
                    printJSON(reply)
                } else {
                    var names: [DeviceID: String] = [:]
                    guard case .devices(let list, _, _) = try client.request(Request(.devices)).message else {
                        throw CtlFailure.protocolError("unexpected reply")
                    }
                    for d in list { names[d.id] = d.name }
                    var selected: DeviceID?
                    if let device {
                        guard let match = list.first(where: { $0.id.rawValue == device || $0.name == device }) else {
                            throw CtlFailure.protocolError("evflowd: no device '\(device)'")
                        }
                        selected = match.id
                    }
                    if watch { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                    print(Render.latency(report, names: names, device: selected).text, terminator: "")
                }
                fflush(nil)
                if watch { for _ in 0..<10 where stopRequested == 0 { usleep(100_000) } }
            } while watch && stopRequested == 0
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
func writeAtomically(_ bytes: [UInt8], to path: String) throws {
    let temporary = path + ".tmp.\(getpid())"
    guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes),
                                         attributes: [.posixPermissions: 0o644]) else {
        throw CtlFailure.io("cannot write \(temporary)")
    }
    guard rename(temporary, path) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(temporary)
        throw CtlFailure.io("cannot rename \(temporary) to \(path): \(reason)")
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
    @Flag(name: .long, help: "The gestures of the keys (press, release, single, double, triple, long, hold) instead of events.") var gestures = false
    @Option(name: .long, help: "At most this many messages per second.") var maxRate: Double?
    @Option(name: .long, help: "Stop after this many stream messages.") var count: Int?
    @Option(name: .long, help: "Sensor id, exact name, quantity (illuminance, accel, ...) or 'all'; repeatable.") var sensor: [String] = []

    /// The `WATCH` request for the options, checked here as evflowd would check it.
    func request() throws -> Request {
        if sensor.contains("") { throw ValidationError("--sensor must not be empty") }
        if raw && gestures { throw ValidationError("--raw and --gestures are two different streams: give one") }
        do {
            var watch = try WatchRequest.checked(devices: device, types: type, codes: code,
                                                 stream: raw ? .raw : gestures ? .gestures : .filtered,
                                         maxRate: maxRate)
            for s in sensor where !watch.sensors.contains(s) { watch.sensors.append(s) }
            return Request(.watch(watch), tag: .string("evflowctl"))
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        let request = try request()
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            // The sensors' channels and units, to show samples in units (SAMPLE carries values only).
            var sensors: [DeviceID: SensorInfo] = [:]
            if !sensor.isEmpty && !global.json, case .devices(_, let list, _) = try client.request(Request(.devices)).message {
                for s in list { sensors[s.id] = s }
            }
            let reply = try client.request(request)
            if global.json {
                printJSON(reply)   // the WATCH reply too: a script knows from it that streaming has begun
                fflush(nil)
            } else if case .watch(_, let matched, _) = reply.message {
                let what = sensor.isEmpty ? "device(s)" : "device(s) and sensor(s)"
                writeNote("watching \(matched.count) \(what)")
            }
            installStopHandlers()
            var seen = 0
            var askedForUnits: Set<DeviceID> = []   // sensors that came after the DEVICES above: asked once each
            while stopRequested == 0, count.map({ seen < $0 }) ?? true {
                let m: Reply
                switch try client.readMessage(timeoutMillis: 200) {
                case .end: throw CtlFailure.unavailable("evflowd closed the connection")
                case .timedOut: continue
                case .reply(let r): m = r
                }
                if case .close(let c) = m.message {
                    throw CtlFailure.unavailable("evflowd closed the connection (\(c.reasonText)): \(c.message)")
                }
                if !global.json {
                    if case .devices(_, let list, .string("evflowctl-units")?) = m.message {
                        for s in list { sensors[s.id] = s }
                        continue
                    }
                    if case .sample(let sample) = m.message, sensors[sample.device] == nil,
                       askedForUnits.insert(sample.device).inserted {
                        try client.send(Request(.devices, tag: .string("evflowctl-units")))
                    }
                }
                seen += 1
                if global.json { printJSON(m) } else { print(Render.streamLine(m.message, sensors: sensors).text) }
                fflush(nil)   // all streams: `stdout` is not concurrency-safe to name
            }
        }
    }
}

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a device's raw events as an evemu file, or with --all every device, hot-plug included, as a session, or with --sensors the sensors' raw samples (Ctrl-C stops).",
        discussion: """
        With --all the file is a session (docs/formats/session.md): every device present and \
        every device added or removed while recording, with their descriptions, on one \
        timeline. evflowd --replay plays it; evflowctl convert takes one device out as evemu. \
        With --sensors the file is a sensor recording (docs/formats/sensors.md) of the sensors \
        present when recording starts; evflowd --replay plays it through the sensor filters.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id or exact name (not with --all).") var device: String?
    @Flag(name: .long, help: "Record every device, and devices added and removed while recording, into one session file.")
    var all = false
    @Flag(name: .long, help: "Record the raw samples of every sensor present into a sensor recording.")
    var sensors = false
    @Option(name: .shortAndLong, help: "Output file (default: standard output).") var output: String?
    @Option(name: .long, help: "Stop after this many frames (of all devices, with --all).") var count: Int?
    /// Nanoseconds; parsed and range-checked by OptionValues, shared with the options fuzz target.
    @Option(name: .long, parsing: .unconditional, help: "Stop after this many seconds (0.001 to 365 days).",
            transform: { try OptionValues.recordDuration($0) })
    var duration: Int64?

    func validate() throws {
        if sensors && (all || device != nil) { throw ValidationError("--sensors records sensors only: no DEVICE or --all with it") }
        if sensors { return }
        if all && device != nil { throw ValidationError("give a DEVICE or --all, not both") }
        if !all && device == nil { throw ValidationError("give the DEVICE to record, or --all for every device, or --sensors") }
    }

    func run() throws {
        if sensors { return try recordSensors() }
        if all { return try recordAll() }
        let device = self.device ?? ""
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            Self.noteHiddenKeys(client)
            let capture = try RawCapture.run(client, device: device, tag: "evflowctl-record", count: count, duration: duration) {
                writeNote("recording \($0.name) (\($0.id)); Ctrl-C to stop")
            }
            let (info, frames) = (capture.info, capture.frames)
            var events = capture.events
            // Times relative to the first event, as evemu-record writes them.
            let origin = events.first?.time ?? 0
            for i in events.indices { events[i].time -= origin }
            let bytes = EvemuWriter.write(RecordedDevice(info: info, events: events))
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    throw CtlFailure.io("cannot write \(output)")
                }
                writeNote("\(frames) frame(s) written to \(output)")
            } else {
                FileHandle.standardOutput.write(Data(bytes))
            }
        }
    }
}
