import ArgumentParser
import Foundation
import Pipeline
import Recording

/// `analyze RECORDING`: offline chatter analysis of a recording (no daemon needed).
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyse key/button chatter in a recording (evemu or libinput record) and suggest windows.")
    @Argument(help: "The recording file.") var recording: String
    @Flag(name: .long, help: "JSON output.") var json = false

    func run() throws {
        try runReporting {
            let parsed: Recording
            do {
                parsed = try Recording.read(contentsOf: URL(fileURLWithPath: recording))
            } catch {
                // RecordingError names the file, line and reason.
                throw CtlFailure(description: "\(error)", code: 65)
            }
            let report = ChatterAnalysis.analyze(parsed.devices.map { (info: $0.info, events: $0.events) })
            let text = json ? report.renderJSON() : report.renderText()
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
        }
    }
}
