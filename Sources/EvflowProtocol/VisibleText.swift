/// Text that came from a device (names from USB descriptors: any gadget can set them), made
/// safe to print on a terminal: control characters are written out, never sent raw, so a
/// name cannot move the cursor, clear the screen or retitle the window.
public enum VisibleText {
    /// `text` with each control character (C0, DEL and C1) written as `\xNN`; everything else,
    /// a backslash too, as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7f...0x9f).contains(s.value)
    }
}
