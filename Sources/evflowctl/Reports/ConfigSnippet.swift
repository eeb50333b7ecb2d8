import Foundation
import Pipeline

extension ChatterReport {
    /// The suggestions as a configuration file (`--config-out`): one rule per device,
    /// matched by vendor:product and name, with a `codes:` entry per key or button that has a
    /// suggestion, and per absolute axis (`axes`, from `--axes`) whose suggested hysteresis
    /// exceeds its fuzz, and a `wheel:` window per device whose wheel a clean window fixes
    /// (`wheel`, from `--wheel`); each rule carries `output: virtual` commented out, the one line that
    /// gives every program the filtered stream. `FilterConfig.parse` accepts it, with that line
    /// commented out or not.
    func configSnippet(axes: [AxisNoiseAnalysis.AxisReport] = [], wheel: [WheelAnalysis.AxisReport] = []) -> String {
        var out = "# written by evflowctl analyze: per code, the debounce that left no bounce and lost no press\n"
        out += "version: 1\n"
        struct Entry { var deviceID, deviceName, line: String; var vendor, product: UInt16; var ruleLevel = false }
        var entries: [Entry] = []
        for c in codes {
            guard let w = c.suggestedWindow, let mode = c.suggestedSpurious else { continue }
            let text = w % 1_000_000 == 0 ? "\(w / 1_000_000)ms" : "\(w / 1000)us"
            entries.append(Entry(deviceID: c.deviceID, deviceName: c.deviceName,
                                 line: "\(c.code): { window: \(text), spurious: \(mode.rawValue) }",
                                 vendor: c.vendor, product: c.product))
        }
        for a in axes where a.suggestedHysteresis > a.fuzz {
            entries.append(Entry(deviceID: a.deviceID, deviceName: a.deviceName,
                                 line: "\(a.code): { hysteresis: \(a.suggestedHysteresis) }", vendor: a.vendor, product: a.product))
        }
        // A device's wheel window: the longest its axes' clean suggestions need (`--wheel`).
        var windows: [(id: String, axis: WheelAnalysis.AxisReport)] = []
        for a in wheel where a.recommended {
            if let i = windows.firstIndex(where: { $0.id == a.deviceID }) {
                if a.suggestion.window > windows[i].axis.suggestion.window { windows[i].axis = a }
            } else {
                windows.append((a.deviceID, a))
            }
        }
        for (_, a) in windows {
            entries.append(Entry(deviceID: a.deviceID, deviceName: a.deviceName, line: "wheel: \(ChatterAnalysis.ms(a.suggestion.window))",
                                 vendor: a.vendor, product: a.product, ruleLevel: true))
        }
        var devices: [(String, [Entry])] = []
        for e in entries {
            if let i = devices.firstIndex(where: { $0.0 == e.deviceID }) { devices[i].1.append(e) } else { devices.append((e.deviceID, [e])) }
        }
        if devices.isEmpty { return out }
        out += "devices:\n"
        func hex(_ v: UInt16) -> String {
            let h = String(v, radix: 16)
            return String(repeating: "0", count: 4 - h.count) + h
        }
        for (_, list) in devices {
            let first = list[0]
            out += "  - match: { id: \"\(hex(first.vendor)):\(hex(first.product))\", name: \(Self.yamlQuoted(first.deviceName)) }\n"
            out += "    # output: virtual   # uncomment so that every program, not only evflow's clients, gets the filtered stream\n"
            for e in list where e.ruleLevel { out += "    \(e.line)\n" }
            let codes = list.filter { !$0.ruleLevel }
            if codes.isEmpty { continue }
            out += "    codes:\n"
            for e in codes { out += "      \(e.line)\n" }
        }
        return out
    }

    /// `text` as a YAML double-quoted scalar that reads back as exactly `text`: `\\` and `"`
    /// escaped, and every character YAML does not allow raw in a file (C0 controls, DEL, C1,
    /// U+FEFF, U+FFFE/FFFF; libyaml refuses the file) or would change (a line break, NEL, U+2028
    /// or U+2029, in a quoted scalar folds to a space, so a name with one would never match) written as `\xNN`,
    /// `\uNNNN`; so are bidi controls and a leading combining mark, as evflowctl's one escaping
    /// rule writes them (the file is read on terminals). Issue #34, finding 9: a name with ESC gave a file `evflowd --check-config`
    /// refused; one with a newline a rule that matched nothing.
    static func yamlQuoted(_ text: String) -> String {
        var out = "\""
        for (i, u) in text.unicodeScalars.enumerated() {
            // Shown on a terminal (`cat`), the file is text a stranger wrote: bidi controls and a
            // leading combining mark are written out as evflowctl's one rule writes them.
            let bidi = [0x061C, 0x200E, 0x200F].contains(u.value) || (0x202A...0x202E).contains(u.value)
                || (0x2066...0x2069).contains(u.value)
            let leadingMark = i == 0 && [.nonspacingMark, .spacingMark, .enclosingMark].contains(u.properties.generalCategory)
            switch u.value {
            case 0x5C: out += "\\\\"
            case 0x22: out += "\\\""
            case _ where bidi || leadingMark:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            case 0x20...0x7E, 0xA0...0x2027, 0x202A...0xD7FF, 0xE000...0xFEFE, 0xFF00...0xFFFD, 0x10000...:
                out.unicodeScalars.append(u)
            default:
                let h = String(u.value, radix: 16)
                out += u.value <= 0xFF ? "\\x" + String(repeating: "0", count: 2 - h.count) + h
                                       : "\\u" + String(repeating: "0", count: 4 - h.count) + h
            }
        }
        return out + "\""
    }
}
