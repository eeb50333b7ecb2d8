import ArgumentParser
import Foundation
import Recording

/// `convert SESSION --device D`: one device's part of a session as a plain evemu file (no
/// daemon needed), for evemu-play, libinput's tools and everything else that reads evemu.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write one device of a session recording (record --all) as a plain evemu file.",
        discussion: """
        The device's description and its events: every appearance one after the other (an \
        unfinished frame before a later appearance is left out), or with --appearance N only \
        the Nth. Times stay on the session's time base; add and remove times are not in an \
        evemu file. See docs/formats/session.md. Exit codes: 0 success, 64 no such device or \
        appearance, 65 malformed session, 74 a file could not be read or written.
        """)
    @Argument(help: "The session file.") var session: String
    @Option(name: .long, help: "The device: its handle in the file (d1, ...), its id, or its exact name.") var device: String
    @Option(name: .long, help: "Only this appearance of the device (1 = the first time it was added).") var appearance: Int?
    @Option(name: .shortAndLong, help: "Output file (default: standard output).") var output: String?

    func validate() throws {
        if let appearance, appearance < 1 { throw ValidationError("--appearance counts from 1") }
    }

    func run() throws {
        try runReporting {
            let parsed: Session
            do {
                parsed = try SessionReader.read(contentsOf: URL(fileURLWithPath: session))
            } catch let error as RecordingError {
                if case .unreadable = error.reason { throw CtlFailure(description: "\(error)", code: 74) }
                throw CtlFailure(description: "\(error)", code: 65)
            }
            let matches = parsed.devices(named: device)
            func list(_ indices: [Int]) -> String {
                indices.map { "\(parsed.devices[$0].handle) (\(parsed.devices[$0].info.id), \"\(parsed.devices[$0].info.name)\")" }
                    .joined(separator: ", ")
            }
            guard let index = matches.first else {
                throw CtlFailure(description: "no device '\(device)' in \(session); it has \(list(Array(parsed.devices.indices)))",
                                 code: 64)
            }
            guard matches.count == 1 else {
                throw CtlFailure(description: "'\(device)' is the name of \(matches.count) devices: \(list(matches)); "
                    + "give a handle or an id", code: 64)
            }
            let appearances = parsed.appearances(of: index).count
            guard let recorded = parsed.recordedDevice(index, appearance: appearance.map { $0 - 1 }) else {
                throw CtlFailure(description: "\(parsed.devices[index].handle) has \(appearances) appearance(s), "
                    + "not \(appearance ?? 0)", code: 64)
            }
            let bytes = EvemuWriter.write(recorded, startMicroseconds: parsed.startMicroseconds)
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    throw CtlFailure.io("cannot write \(output)")
                }
                writeNote("\(recorded.events.count) event(s) of \(parsed.devices[index].handle) written to \(output)")
            } else {
                FileHandle.standardOutput.write(Data(bytes))
            }
        }
    }
}
