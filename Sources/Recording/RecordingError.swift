import InputModel

/// Why a recording could not be read: always the file, the 1-based line and the reason.
///
/// Readers never return half a recording: they either return everything or throw this.
/// `line` is 0 only for errors about the whole file (it could not be opened).
public struct RecordingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Path of the file the error is in, as it was given to the reader.
    public var file: String
    /// 1-based line number; 0 when the error is not about one line.
    public var line: Int
    /// What is wrong.
    public var reason: Reason

    /// Creates an error.
    public init(file: String, line: Int, reason: Reason) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    /// `file:line: reason`, the form compilers use, so editors can jump to it.
    public var description: String { "\(file):\(line): \(reason)" }

    /// The kinds of problems, each with the text that shows where it is.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The file could not be read at all.
        case unreadable(String)
        /// A line ends before all its fields; `expected` names the first missing one.
        case truncatedLine(expected: String)
        /// A field that must be hexadecimal is not (or does not fit its type).
        case badHex(field: String, text: String)
        /// A field that must be a decimal number is not (or does not fit its type).
        case badNumber(field: String, text: String)
        /// Text after the last field of a line (outside a `#` comment).
        case trailingText(String)
        /// An event's timestamp is earlier than the one before it (raw µs as written).
        case timeWentBackwards(previousMicroseconds: Int64, microseconds: Int64)
        /// A line starts with something the format does not know.
        case unknownLinePrefix(String)
        /// A known line in a place where it cannot be (a description line after events, ...).
        case misplacedLine(String)
        /// Events without a device description (no `N:`/`I:` lines and no `.desc` file).
        case missingDescription(String)
        /// A description without any event: not a recording.
        case noEvents(String)
        /// The file is some other kind of recording; the text says which.
        case notAnEvdevRecording(String)
        /// The file is no recording at all (text, an empty file); the text says what it holds.
        case notARecording(String)
        /// The YAML parser (libyaml, composed by `YAMLComposer`) rejected the file.
        case yaml(String)
        /// Valid YAML whose shape is not a libinput recording.
        case badStructure(String)
        /// An absolute axis no device can have (`AbsInfo.problem`).
        case impossibleAxis(code: UInt16, problem: String)
        /// A session file (docs/formats/session.md) whose devices or timeline do not hold
        /// together: an unknown handle, an `add:` of a present device, a bad first line, ...
        case badSession(String)

        /// A one-line explanation.
        public var description: String {
            switch self {
            case .unreadable(let why): return "cannot read file: \(why)"
            case .truncatedLine(let expected): return "truncated line: expected \(expected)"
            case .badHex(let field, let text): return "bad hex number '\(text)' for \(field)"
            case .badNumber(let field, let text): return "bad number '\(text)' for \(field)"
            case .trailingText(let text): return "unexpected text '\(text)' after the last field"
            case .timeWentBackwards(let previous, let now):
                return "time goes backwards: \(Self.seconds(now)) after \(Self.seconds(previous))"
            case .unknownLinePrefix(let prefix): return "unknown line prefix '\(prefix)'"
            case .misplacedLine(let why): return "misplaced line: \(why)"
            case .missingDescription(let why): return "missing device description: \(why)"
            case .noEvents(let why): return "no events: \(why)"
            case .notAnEvdevRecording(let what): return "not an evdev recording: \(what)"
            case .notARecording(let what):
                return "not a recording in a format evflow reads (evemu, evtest, libinput record, session): \(what)"
            case .yaml(let problem): return "YAML error: \(problem)"
            case .badStructure(let why): return "not a libinput recording: \(why)"
            case .impossibleAxis(let code, let problem):
                return "impossible axis \(EventNames.codeText(type: EventType.abs, code: code)): \(problem)"
            case .badSession(let why): return "bad session: \(why)"
            }
        }

        /// `sec.usec` as evemu writes it.
        static func seconds(_ microseconds: Int64) -> String {
            let sign = microseconds < 0 ? "-" : ""
            let magnitude = microseconds.magnitude
            let fraction = String(magnitude % 1_000_000)
            return "\(sign)\(magnitude / 1_000_000)."
                + String(repeating: "0", count: 6 - fraction.count) + fraction
        }
    }
}
