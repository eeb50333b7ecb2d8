import Foundation
import ReactiveTesting
import Testing
@testable import Recording

/// One hand-made broken file per error kind, each pinned to its exact line and reason.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    let file: String
    let line: Int
    let reason: RecordingError.Reason
    var testDescription: String { file }

    static let all: [MalformedCase] = [
        MalformedCase(file: "truncated-line.evemu", line: 14, reason: .truncatedLine(expected: "event value")),
        MalformedCase(file: "bad-hex.evemu", line: 14, reason: .badHex(field: "event code", text: "00zz")),
        MalformedCase(file: "bad-description-hex.evemu", line: 4, reason: .badHex(field: "product", text: "56789")),
        MalformedCase(file: "bad-number.evemu", line: 14,
                      reason: .badNumber(field: "event value", text: "4294967296")),
        MalformedCase(file: "bad-timestamp.evemu", line: 14, reason: .badNumber(field: "timestamp", text: "0.1")),
        MalformedCase(file: "trailing-text.evemu", line: 14, reason: .trailingText("0")),
        MalformedCase(file: "time-backwards.evemu", line: 13,
                      reason: .timeWentBackwards(previousMicroseconds: 5_000_000, microseconds: 4_999_999)),
        MalformedCase(file: "unknown-prefix.evemu", line: 11, reason: .unknownLinePrefix("X:")),
        MalformedCase(file: "misplaced-line.evemu", line: 14,
                      reason: .misplacedLine("N: line after the first E: line")),
        MalformedCase(file: "missing-description.events", line: 1, reason: .missingDescription(
            "no N: line before the events (an events-only file needs its .desc file); "
                + "tried missing-description.desc beside it; name one with --desc")),
        MalformedCase(file: "hid-recorder.hid", line: 4, reason: .notAnEvdevRecording(
            "hid-recorder file (R: report descriptor and D: lines carry raw HID reports)")),
        MalformedCase(file: "yaml-syntax.yml", line: 8, reason: .yaml(
            "did not find expected ',' or ']' (while parsing a flow sequence at line 7)")),
        MalformedCase(file: "yaml-short-event.yml", line: 16,
                      reason: .truncatedLine(expected: "5 numbers in event, found 4")),
        MalformedCase(file: "yaml-time-backwards.yml", line: 16,
                      reason: .timeWentBackwards(previousMicroseconds: 1_000_000, microseconds: 999_999)),
        MalformedCase(file: "yaml-wrong-version.yml", line: 1,
                      reason: .badStructure("version 2 (only version 1 is known)")),
    ]
}

@Suite("Malformed recordings", .ownLiveResources)
struct MalformedRecordingTests {
    @Test(arguments: MalformedCase.all)
    func errorNamesFileLineAndReason(_ fixture: MalformedCase) {
        let url = Fixtures.url("malformed/" + fixture.file)
        let expected = RecordingError(file: url.path, line: fixture.line, reason: fixture.reason)
        // Through the format-sniffing entry point and through the format's own reader.
        #expect(throws: expected) { try Recording.read(contentsOf: url) }
        if fixture.file.hasSuffix(".yml") {
            #expect(throws: expected) { try LibinputRecordReader.read(contentsOf: url) }
        } else {
            // The evemu reader alone does not look for description files, so it does not list them.
            var own = expected
            if case .missingDescription(let why) = own.reason, let cut = why.range(of: "; tried ") {
                own.reason = .missingDescription(String(why[..<cut.lowerBound]))
            }
            #expect(throws: own) { try EvemuReader.read(contentsOf: url) }
        }
    }

    @Test func descriptionReadsLikeACompilerMessage() {
        let url = Fixtures.url("malformed/truncated-line.evemu")
        #expect(throws: RecordingError.self) { try EvemuReader.read(contentsOf: url) }
        do {
            _ = try EvemuReader.read(contentsOf: url)
        } catch {
            #expect(error.description == "\(url.path):14: truncated line: expected event value")
        }
    }

    @Test func eventsFileWithoutItsDescriptionIsRefusedAtTheFirstEvent() {
        let url = Fixtures.evemu("mice/PS2 Generic Mouse.events")
        #expect(throws: RecordingError(file: url.path, line: 1, reason: .missingDescription(
            "no N: line before the events (an events-only file needs its .desc file)"))) {
            try EvemuReader.read(contentsOf: url)
        }
    }

    @Test func descriptionLinesInAnEventsFileAreMisplaced() {
        let events = Fixtures.url("handmade/zero-times.evemu")
        let description = Fixtures.evemu("mice/PS2 Generic Mouse.desc")
        #expect(throws: RecordingError(file: events.path, line: 3, reason: .misplacedLine(
            "N: line in an events file whose description is \(description.path)"))) {
            try EvemuReader.read(events: events, description: description)
        }
    }

    @Test func eachReaderRefusesTheOtherFormat() {
        let yaml = Fixtures.url("recordings/libinput/PS2-scrolls.yml")
        #expect(throws: RecordingError(file: yaml.path, line: 1, reason: .notAnEvdevRecording(
            "libinput record YAML (read it with LibinputRecordReader)"))) {
            try EvemuReader.read(contentsOf: yaml)
        }
        let evemu = Fixtures.url("handmade/zero-times.evemu")
        #expect(throws: RecordingError(file: evemu.path, line: 3, reason: .badStructure(
            "this is an evemu file (read it with EvemuReader)"))) {
            try LibinputRecordReader.read(contentsOf: evemu)
        }
    }

    @Test func missingAndEmptyFiles() {
        let missing = Fixtures.url("malformed/does-not-exist.evemu")
        #expect(throws: RecordingError(file: missing.path, line: 0, reason: .unreadable("no such file"))) {
            try Recording.read(contentsOf: missing)
        }
        #expect(throws: RecordingError(file: "empty", line: 1, reason: .missingDescription(
            "no N: line before the events (an events-only file needs its .desc file)"))) {
            try EvemuReader.parse([], file: "empty")
        }
    }

    @Test func moreEvemuLineErrorsInMemory() {
        let head = "N: X\nI: 0001 0002 0003 0004\n"
        func error(_ text: String) -> RecordingError? {
            do { _ = try EvemuReader.parse(Array(text.utf8), file: "m"); return nil } catch { return error }
        }
        #expect(error(head + "  E: 0.000000 0001 001e 1\n")
            == RecordingError(file: "m", line: 3, reason: .unknownLinePrefix("E:")))
        #expect(error(head + "B: 20 00 00 00 00 00 00 00 00\n")
            == RecordingError(file: "m", line: 3, reason: .badHex(field: "event type", text: "20")))
        #expect(error(head + "A: 00 0 10 0\n")
            == RecordingError(file: "m", line: 3, reason: .truncatedLine(expected: "axis flat")))
        #expect(error(head + "I: 0001 0002 0003 0004\n")
            == RecordingError(file: "m", line: 3, reason: .misplacedLine("second I: line")))
        #expect(error(head + "E: 0.000000 0x01 001e 1\n")
            == RecordingError(file: "m", line: 3, reason: .badHex(field: "event type", text: "0x01")))
        #expect(error(head + "E: -1.000000 0001 001e 1\n")
            == RecordingError(file: "m", line: 3, reason: .badNumber(field: "timestamp", text: "-1.000000")))
        #expect(error(head + "E: 0.000000 0001 001e -2147483649\n")
            == RecordingError(file: "m", line: 3, reason: .badNumber(field: "event value", text: "-2147483649")))
        #expect(error("I: 0001 0002 0003 0004\nE: 0.000000 0001 001e 1\n")
            == RecordingError(file: "m", line: 2, reason: .missingDescription(
                "no N: line before the events (an events-only file needs its .desc file)")))
        #expect(error("N: X\nE: 0.000000 0001 001e 1\n")
            == RecordingError(file: "m", line: 2, reason: .missingDescription("no I: line")))
        #expect(error(head + "E: 0.000000 0001 001e -2147483648\n") == nil)
    }

    @Test func moreYAMLShapeErrorsInMemory() {
        func error(_ text: String) -> RecordingError? {
            do { _ = try LibinputRecordReader.parse(Array(text.utf8), file: "y"); return nil } catch { return error }
        }
        #expect(error("version: 1\nndevices: 2\ndevices: []\n")
            == RecordingError(file: "y", line: 2, reason: .badStructure("ndevices is 2 but 0 devices follow")))
        #expect(error("version: 1\n")
            == RecordingError(file: "y", line: 1, reason: .badStructure("missing devices")))
        #expect(error("version: 1\ndevices:\n- evdev:\n    name: A\n    id: [1, 2, 3, 4]\n    codes: [1]\n")
            == RecordingError(file: "y", line: 6, reason: .badStructure("codes is not a mapping")))
        #expect(error("version: 1\ndevices:\n- evdev:\n    name: A\n    id: [1, 2, 3, 0x10]\n")
            == RecordingError(file: "y", line: 5, reason: .badNumber(field: "evdev id", text: "0x10")))
        #expect(error("version: 1\ndevices:\n- evdev:\n    name: A\n    id: [1, 2, 3, 4]\n") == nil)
    }
}
