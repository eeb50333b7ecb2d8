/// Text a stranger controls (device names from USB descriptors, another client's WATCH id,
/// ids and names in a session or sensor recording, a daemon's reasons), made safe to print on
/// a terminal: control characters are written out, never sent raw, so the text cannot move the
/// cursor, clear the screen, retitle the window, reorder what follows it, or break a line.
///
/// This is the one escaping rule of evflow's text output (docs/reliability.md, "Escaping"):
/// evflowctl applies it to every field it lays out (`TerminalText`), evflowd to the names and
/// ids in METRICS labels.
public enum VisibleText {
    /// `text` with
    /// - each control character (C0, the line feed and tab too, DEL and C1) written as `\xNN`;
    /// - each bidirectional formatting character (U+061C, U+200E/F, U+202A–U+202E,
    ///   U+2066–U+2069: they reorder the rest of the line, "Trojan Source") written as `\uNNNN`;
    /// - a combining mark at the very start (it would join the character before the text,
    ///   a column separator or a quote) written as `\uNNNN`;
    /// everything else, a backslash too, as it is. The result holds none of these, so escaping
    /// it again changes nothing.
    public static func escaped(_ text: String) -> String {
        var scalars = text.unicodeScalars.makeIterator()
        let startsWithMark = scalars.next().map(isMark) ?? false
        guard startsWithMark || text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        var first = true
        for scalar in text.unicodeScalars {
            defer { first = false }
            if scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) {
                out += "\\x" + hex(scalar.value, digits: 2)
            } else if isBidiControl(scalar) || (first && isMark(scalar)) {
                out += "\\u" + hex(scalar.value, digits: 4)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `s` is written out wherever it stands.
    private static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7f...0x9f).contains(s.value) || isBidiControl(s)
    }

    private static func isBidiControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func isMark(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    private static func hex(_ v: UInt32, digits: Int) -> String {
        let h = String(v, radix: 16)
        return h.count < digits ? String(repeating: "0", count: digits - h.count) + h : h
    }
}
