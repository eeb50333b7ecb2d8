import Foundation
import EvflowProtocol

/// Text on its way to a terminal, safe by construction: the literal parts of a renderer's
/// string are the program's own, and every value interpolated into it (a device name, an id,
/// another client's WATCH id, a number) passes `VisibleText.escaped`, the one escaping rule.
/// A renderer builds its output as `TerminalText`, so a field added later is escaped without
/// anyone remembering to: `"\(info.name) (\(info.id))"` cannot carry a raw ESC, BEL, C1
/// control, bidi override or line break into the output. Already-safe text (another
/// renderer's output, a table) is interpolated as it is; escaping twice would change nothing.
struct TerminalText: ExpressibleByStringInterpolation, Equatable, CustomStringConvertible {
    /// The safe text.
    private(set) var text: String

    /// A literal: the program's own text, trusted (it holds the renderer's line breaks).
    init(stringLiteral value: String) { text = value }

    /// Text from elsewhere, escaped whole (a line break in it is written out too).
    init(escaping value: String) { text = VisibleText.escaped(value) }

    /// Multi-line text from elsewhere (METRICS' exposition): each line escaped, the line
    /// feeds between them kept.
    init(escapingLines value: String) {
        text = value.split(separator: "\n", omittingEmptySubsequences: false).map { VisibleText.escaped(String($0)) }
            .joined(separator: "\n")
    }

    init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    var description: String { text }

    /// Builds the text: literals as they are, values escaped.
    struct Interpolation: StringInterpolationProtocol {
        var text = ""
        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 16 * interpolationCount) }
        mutating func appendLiteral(_ literal: String) { text += literal }
        /// Already safe: as it is.
        mutating func appendInterpolation(_ safe: TerminalText) { text += safe.text }
        /// Anything else: its description, escaped.
        mutating func appendInterpolation<T>(_ value: T) { text += VisibleText.escaped(String(describing: value)) }
    }

    static func + (a: TerminalText, b: TerminalText) -> TerminalText { TerminalText(safe: a.text + b.text) }
    static func += (a: inout TerminalText, b: TerminalText) { a.text += b.text }

    /// Its display width on a terminal (`DisplayWidth`).
    var width: Int { DisplayWidth.of(text) }

    /// `parts` with `separator` between them.
    static func joined(_ parts: [TerminalText], separator: TerminalText = "") -> TerminalText {
        TerminalText(safe: parts.map(\.text).joined(separator: separator.text))
    }

    /// Cut or padded to exactly `width` columns (cut text ends in `…`).
    func fit(_ width: Int, right: Bool = false) -> TerminalText { TerminalText(safe: DisplayWidth.fit(text, width, right: right)) }

    /// Padded with spaces to at least `width` columns.
    func padded(to width: Int) -> TerminalText {
        let w = self.width
        return w >= width ? self : TerminalText(safe: text + String(repeating: " ", count: width - w))
    }

    /// Only for text already escaped or made of safe parts (this file's operations).
    private init(safe: String) { text = safe }
}

extension Array where Element == TerminalText {
    /// The texts with `separator` between them.
    func joined(separator: TerminalText = "") -> TerminalText { TerminalText.joined(self, separator: separator) }
}

/// How many terminal columns text takes, as terminals count them (wcwidth): East Asian wide
/// and fullwidth characters and most emoji 2, combining marks, format and zero-width
/// characters 0, the rest 1. A small table of the wide ranges, no library: good enough to keep
/// `top` and the tables inside their columns.
enum DisplayWidth {
    /// Columns of one scalar.
    static func of(_ s: Unicode.Scalar) -> Int {
        let v = s.value
        if v == 0 { return 0 }
        if v < 0x20 || (0x7f...0x9f).contains(v) { return 0 }   // never printed raw: VisibleText writes them out
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0x1160...0x11FF).contains(v) || v == 0x200B { return 0 }   // Hangul medial vowels, final consonants; zero width space
        return isWide(v) ? 2 : 1
    }

    /// Columns of `text`.
    static func of(_ text: String) -> Int { text.unicodeScalars.reduce(0) { $0 + of($1) } }

    /// Columns of one character (grapheme cluster).
    static func of(_ c: Character) -> Int { c.unicodeScalars.reduce(0) { $0 + of($1) } }

    /// `text` cut (at a character boundary, ending in `…`) or padded with spaces to exactly
    /// `width` columns; `right` pads on the left.
    static func fit(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard width > 0 else { return "" }
        let w = of(text)
        if w > width {
            var out = "", used = 0
            for c in text {
                let cw = of(c)
                if used + cw > width - 1 { break }
                out.append(c)
                used += cw
            }
            return out + "…" + String(repeating: " ", count: width - 1 - used)
        }
        let pad = String(repeating: " ", count: width - w)
        return right ? pad + text : text + pad
    }

    private static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE,
             0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE,
             0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705,
             0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF,
             0x2B1B...0x2B1C, 0x2B50, 0x2B55,
             0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A,
             0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF,
             0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}

/// Writes one line to standard error (progress, notes, errors): the line is `TerminalText`,
/// so whatever it quotes is escaped.
func writeNote(_ line: TerminalText) {
    FileHandle.standardError.write(Data((line.text + "\n").utf8))
}
