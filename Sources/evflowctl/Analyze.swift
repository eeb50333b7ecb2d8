import ArgumentParser
import Foundation
import Pipeline
import Recording

/// `analyze RECORDING`: offline chatter analysis of a recording (no daemon needed). The
/// suggestion per code is found by running the real filter over the recording.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyse key/button chatter in a recording (evemu, evtest or libinput record) and suggest debounce settings.",
        discussion: """
        For every key and button the real debounce filter is run over the recording: the report \
        gives how many bounces remain and how many real presses are lost with the default and \
        with the suggestion (the default if it leaves none, else the smallest clean window). \
        Exit codes: 0 success, 65 malformed recording, 74 a file could not be read or written.
        """)
    @Argument(help: "The recording file.") var recording: String
    @Flag(name: .long, help: "JSON output.") var json = false
    @Option(name: .customLong("desc"), help: "Description of RECORDING when it holds events only (evemu description or evtest header, any name).")
    var descriptionPath: String?
    @Flag(name: .long, help: "Also measure idle noise per absolute axis and suggest a hysteresis.")
    var axes = false
    @Option(name: .customLong("config-out"), help: "Also write the suggestion as a configuration file (YAML) to FILE.")
    var configOut: String?

    func run() throws {
        try runReporting {
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
            let devices = parsed.devices.map { (info: $0.info, events: $0.events) }
            let report = ChatterAnalysis.analyze(devices)
            let axisReports = axes ? AxisNoiseAnalysis.analyze(devices) : []
            var text = json ? report.renderJSON() : report.renderText()
            if axes && !json { text += AxisNoiseAnalysis.renderText(axisReports) }
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
            if let configOut {
                do {
                    try Data(report.configSnippet(axes: axisReports).utf8).write(to: URL(fileURLWithPath: configOut))
                } catch {
                    throw CtlFailure(description: "\(configOut): cannot write: \(error.localizedDescription)", code: 74)
                }
            }
        }
    }
}
