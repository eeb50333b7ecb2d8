import ArgumentParser
import EvflowProtocol
import Foundation
import InputModel
import Pipeline
import OptionValues
import Recording

/// `analyze RECORDING` / `analyze --live DEVICE`: chatter analysis of a recording (no daemon
/// needed) or of a running daemon's raw stream. The suggestion per code is found by running
/// the real filter over the events.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyse key/button chatter in a recording (evemu, evtest or libinput record) or a live device, and suggest debounce settings; in a sensor recording, the noise per channel and filter settings.",
        discussion: """
        For every key and button the real debounce filter is run over the recording: the report \
        gives how many bounces remain and how many real presses are lost with the default and \
        with the suggestion (the default if it leaves none, else the smallest clean window). \
        With --html the report is also written as one self-contained page with plots (no \
        network, no script; it prints). With --live the events are DEVICE's raw stream from \
        a running evflowd for --duration seconds (or until Ctrl-C), and the page also shows \
        evflowd's latency per stage. \
        Exit codes: 0 success, 65 malformed recording, 69 evflowd is not running (--live), \
        74 a file could not be read or written.
        """)
    @Argument(help: "The recording file (not with --live).") var recording: String?
    @Flag(name: .long, help: "JSON output.") var json = false
    @Option(name: .customLong("desc"), help: "Description of RECORDING when it holds events only (evemu description or evtest header, any name).")
    var descriptionPath: String?
    @Flag(name: .long, help: "Also measure idle noise per absolute axis and suggest a hysteresis.")
    var axes = false
    @Flag(name: .long, help: "Also find stray reversed scroll-wheel ticks and suggest a wheel filter window.")
    var wheel = false
    @Option(name: .customLong("config-out"), help: "Also write the suggestion as a configuration file (YAML) to FILE.")
    var configOut: String?
    @Option(name: .long, help: "Also write the report as a self-contained HTML page with plots to FILE.")
    var html: String?
    @Option(name: .long, help: "Analyse this device's raw stream from a running evflowd (id or exact name).")
    var live: String?
    /// Nanoseconds; parsed and range-checked by OptionValues, as `record --duration` is.
    @Option(name: .long, parsing: .unconditional, help: "With --live: seconds to capture, 0.001 to 365 days (default: until Ctrl-C).",
            transform: { try OptionValues.recordDuration($0) })
    var duration: Int64?
    @Option(name: .long, help: "With --live: evflowd's socket (default $EVFLOW_SOCKET or /run/evflow/evflowd.sock).")
    var socket: String?

    func validate() throws {
        if (recording == nil) == (live == nil) { throw ValidationError("give a RECORDING or --live DEVICE") }
        if live == nil && (duration != nil || socket != nil) { throw ValidationError("--duration and --socket go with --live") }
        if live != nil && descriptionPath != nil { throw ValidationError("--desc describes a RECORDING, not --live") }
    }

    func run() throws {
        try runReporting {
            let source: String
            var devices: [(info: DeviceInfo, events: [InputEvent])]
            var latency: (report: LatencyReport, names: [DeviceID: String])?
            if let live {
                let client = try DaemonClient(socketPath: GlobalOptions.socketPath(socket))
                let capture = try RawCapture.run(client, device: live, tag: "evflowctl-analyze", count: nil, duration: duration) {
                    let message: TerminalText = "capturing \($0.name) (\($0.id))\(duration.map { " for \(Self.seconds($0)) s" } ?? ""); Ctrl-C to stop\n"
                    FileHandle.standardError.write(Data(message.text.utf8))
                }
                devices = [(info: capture.info, events: capture.events)]
                source = "live: \(capture.info.name) (\(capture.info.id)), \(capture.frames) frame(s) from evflowd"
                if html != nil {
                    guard case .latency(let report, _) = try client.request(Request(.latency)).message,
                          case .devices(let list, _, _) = try client.request(Request(.devices)).message else {
                        throw CtlFailure.protocolError("unexpected reply")
                    }
                    latency = (report, Dictionary(list.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a }))
                }
            } else {
                let recording = self.recording ?? ""
                if SensorRecording.isSensorRecording(path: recording) { return try analyzeSensors(recording) }
                let parsed: Recording
                do {
                    parsed = try Recording.read(contentsOf: URL(fileURLWithPath: recording),
                                                description: descriptionPath.map { URL(fileURLWithPath: $0) })
                } catch {
                    // RecordingError names the file, line and reason; a file that cannot be read
                    // at all is an I/O error (74), anything else a malformed recording (65).
                    if let e = error as? RecordingError, case .unreadable = e.reason { throw CtlFailure(description: "\(error)", code: 74) }
                    throw CtlFailure(description: "\(error)", code: 65)
                }
                devices = parsed.devices.map { (info: $0.info, events: $0.events) }
                source = "recording \((recording as NSString).lastPathComponent)"
            }
            let report = ChatterAnalysis.analyze(devices)
            let axisReports = axes ? AxisNoiseAnalysis.analyze(devices) : []
            var text = json ? report.renderJSON() : report.renderText().text
            if axes && !json { text += AxisNoiseAnalysis.renderText(axisReports).text }
            let wheelReports = wheel ? WheelAnalysis.analyze(devices) : []
            if wheel && !json { text += WheelAnalysis.renderText(wheelReports).text }
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
            if let configOut { try write(report.configSnippet(axes: axisReports, wheel: wheelReports), to: configOut) }
            if let html {
                let page = ChatterPage(source: source, command: commandLine(), devices: devices, report: report,
                                       axes: axes ? axisReports : nil, wheel: wheel ? wheelReports : nil, latency: latency)
                try write(ChatterHTML.render(page), to: html)
            }
        }
    }

    private func write(_ text: String, to path: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw CtlFailure(description: "\(path): cannot write: \(error.localizedDescription)", code: 74)
        }
    }

    /// Nanoseconds as the seconds a person typed (`2`, `0.5`).
    private static func seconds(_ nanoseconds: Int64) -> String {
        String(format: "%g", Double(nanoseconds) / 1e9)
    }

    /// The command as a reader would type it again (paths as given, file names only).
    private func commandLine() -> String {
        var words = ["evflowctl", "analyze"]
        if let recording { words.append((recording as NSString).lastPathComponent) }
        if let live { words += ["--live", live] }
        if let duration { words += ["--duration", Self.seconds(duration)] }
        if axes { words.append("--axes") }
        if wheel { words.append("--wheel") }
        if let html { words += ["--html", (html as NSString).lastPathComponent] }
        return words.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }
}
