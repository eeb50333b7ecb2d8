import Foundation
import InputModel
import Pipeline
import Testing
@testable import evflowctl

/// Issue #34, finding 9: `analyze --config-out` quoted a device name by escaping `\` and `"`
/// only. A name with ESC gave a file libyaml (and so `evflowd --check-config`) refuses; a name
/// with a newline (a libinput recording's name may hold one) was folded to a space by the
/// YAML loader, so the rule silently matched nothing. Every written config must load and its
/// rule must match the device it was written for.
@Suite("evflowctl analyze --config-out: any device name round-trips")
struct ConfigSnippetNameTests {
    /// Pieces names are made of: controls, line breaks YAML folds, quotes, YAML indicators,
    /// glob characters, spaces at either end, non-BMP characters, marks, BOM and non-characters.
    static let pieces = ["\u{1b}", "\u{1b}[2J", "\n", "\r\n", "\t", "\u{0}", "\u{7}", "\u{7f}", "\u{85}", "\u{9b}",
                         "\u{2028}", "\u{2029}", "\u{feff}", "\u{fffe}", "\u{ffff}", "\"", "'", "\\", "\\n", "\\x1b", ":",
                         ": ", " #", "#", "- ", "? ", "{", "}", "[", "]", ",", "&a", "*b", "!tag", "%", "@", "`", "|", ">",
                         " ", "  ", "*", "?", "😀", "𝔘𝔫𝔦", "\u{10FFFF}", "東京", "e\u{301}", "\u{301}", "\u{202e}", "Keyboard",
                         "USB", "1", "0x", "null", "true", "~", "yes"]

    /// A deterministic generator (SplitMix64): the same names on every run.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func names(count: Int) -> [String] {
        var g = Generator(state: 34)
        var out = ["Evil\u{1b}]0;x\u{7}", "two\nlines", " padded ", "say \"hi\": #1", "𝔘 non-BMP 😀", "", " ", "\\", "\n"]
        while out.count < count {
            let n = Int.random(in: 1...6, using: &g)
            out.append((0..<n).map { _ in pieces.randomElement(using: &g)! }.joined())
        }
        return out
    }

    @Test("issue #34 (9): for 600 generated names the written config loads and its rule matches the device")
    func everyNameRoundTrips() throws {
        let base = Synthetic.report()
        for name in Self.names(count: 600) {
            var report = base
            for i in report.codes.indices { report.codes[i].deviceName = name }
            let yaml = report.configSnippet()
            let what = "\(name.unicodeScalars.map { String($0.value, radix: 16) })"
            let config: FilterConfig
            do {
                config = try FilterConfig.parse(yaml: yaml)
            } catch {
                Issue.record("\(what): \(error)\n\(yaml)")
                continue
            }
            var info = Synthetic.info
            info.name = name
            #expect(config.rules.count == 1, "\(what)")
            #expect(config.rules.first?.match.name == name, "\(what): read back as \(config.rules.first?.match.name.map { $0.debugDescription } ?? "nil")")
            #expect(config.rules.first?.match.matches(info) == true, "\(what)")
            #expect(config.settings(for: info).keys[code("KEY_C")] == .chatter(window: 21 * ms, spurious: .auto, spuriousWindow: 12 * ms),
                    "\(what): the suggestion applies")
            // No raw control character in the file: it is also shown on terminals and in editors.
            // No raw control or bidi character in the file, and no mark joining the opening quote:
            // it is also shown on terminals and in editors.
            let scalars = Array(yaml.unicodeScalars)
            #expect(!scalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7f...0x9f).contains($0.value)
                || (0x202A...0x202E).contains($0.value) }, "\(what)")
            #expect(!zip(scalars, scalars.dropFirst()).contains { $0 == "\"" && $1.properties.generalCategory == .nonspacingMark },
                    "\(what)")
        }
    }
}
