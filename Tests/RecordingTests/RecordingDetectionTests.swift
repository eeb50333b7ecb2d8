import Foundation
import InputModel
import Recording
import ReactiveTesting
import Testing

/// What `Recording.read` says about files that are not what they should be (issue #25,
/// finding 12): it names what the file is and a line the file has.
@Suite("Recording.read: what a file is", .ownLiveResources)
struct RecordingDetectionTests {
    static func temp(_ name: String, _ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-\(getpid())-detect-\(name)")
        try Data(text.utf8).write(to: url)
        return url
    }

    static func failure(_ url: URL, description: URL? = nil) -> RecordingError? {
        do {
            _ = try Recording.read(contentsOf: url, description: description)
            return nil
        } catch {
            return error
        }
    }

    static let formats = "not a recording in a format evflow reads (evemu, evtest, libinput record, session)"

    /// Regression: reStructuredText got "unknown line prefix", Markdown and an empty file
    /// "missing device description".
    @Test("text that is no recording is named so, at its first line that is not blank or a comment", arguments: [
        ("notes.rst", "Pen tablet notes\n================\n\nThe pen drifts.\n", 1, "line 1 starts with 'Pen tablet notes'"),
        ("notes.md", "# Pen tablet\n\nThe pen drifts when held still.\n", 3, "line 3 starts with 'The pen drifts when held'"),
        ("empty.evemu", "", 1, "the file is empty"),
        ("comments.evemu", "# EVEMU 1.3\n# nothing else\n\n", 1, "the file holds only blank lines and comments"),
    ])
    func textIsNoRecording(name: String, text: String, line: Int, what: String) throws {
        let url = try Self.temp(name, text)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = Self.failure(url)
        #expect(error == RecordingError(file: url.path, line: line, reason: .notARecording(what)))
        #expect(error?.description == "\(url.path):\(line): \(Self.formats): \(what)")
    }

    @Test("the formats evflow reads are not refused by the check")
    func recordingsPass() throws {
        #expect(throws: Never.self) { try Recording.read(contentsOf: Fixtures.evemu("mice/PS2 Generic Mouse.events")) }
        // hid-recorder output is still named by the evemu reader.
        let hid = try Self.temp("hid.txt", "# HID\nR: 3 05 01 09\nN: x\nI: 3 1 2\nD: 0\nE: 0.000000 3 01 02 03\n")
        defer { try? FileManager.default.removeItem(at: hid) }
        guard case .notAnEvdevRecording = Self.failure(hid)?.reason else {
            Issue.record("hid-recorder file: \(String(describing: Self.failure(hid)))")
            return
        }
    }

    /// Regression: `--desc HEADER` naming an evtest header for evemu events blamed line 1 of
    /// the header ("unknown line prefix 'Input'").
    @Test("evemu events with an evtest header as --desc: the events file and its first event line are named")
    func evtestHeaderForEvemuEvents() throws {
        let events = try Self.temp("mouse.events", "# EVEMU 1.3\n"
            + "E: 0.000001 0002 0000 0001\nE: 0.000001 0000 0000 0000\n")
        let header = try Self.temp("mouse.evtest", "Input driver version is 1.0.1\n"
            + "Input device ID: bus 0x11 vendor 0x2 product 0x1 version 0x0\n"
            + "Input device name: \"PS/2 Generic Mouse\"\n")
        defer { for u in [events, header] { try? FileManager.default.removeItem(at: u) } }
        let error = Self.failure(events, description: header)
        #expect(error?.file == events.path)
        #expect(error?.line == 2)
        guard case .missingDescription(let why) = error?.reason else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(why.contains(header.path) && why.contains("evtest header"))
    }

    /// Regression: "no events" used line 0, which the format docs keep for a file that could
    /// not be read.
    @Test("a description without events: no events, at the file's last line")
    func noEventsNamesALine() throws {
        let desc = try Self.temp("only.desc", "# EVEMU 1.3\nN: Mouse\nI: 0011 0002 0001 0000\n"
            + "P: 00 00 00 00 00 00 00 00\nB: 00 0b 00 00 00 00 00 00 00\nB: 02 03 00 00 00 00 00 00 00\n")
        defer { try? FileManager.default.removeItem(at: desc) }
        let error = Self.failure(desc)
        #expect(error?.line == 6)
        guard case .noEvents = error?.reason else {
            Issue.record("\(String(describing: error))")
            return
        }
    }
}
