import InputModel

extension FilterConfig {
    /// What `evflowd --check-config` prints after `configuration OK`, so a user sees what will
    /// be grabbed before reloading: one line per rule that sets `output` (a later `observe`
    /// rule releases devices an earlier `virtual` one took), a line when no rule grabs
    /// anything, and the panic chord by name.
    public var checkSummary: [String] {
        var lines: [String] = []
        for (i, rule) in rules.enumerated() {
            guard let output = rule.output else { continue }
            let effect = switch output {
            case .virtual: "matching devices are grabbed and re-emitted through a virtual device"
            case .observe: "matching devices are observed, not grabbed"
            }
            lines.append("devices[\(i)]: output \(output.rawValue): \(effect) (match \(rule.match.summary))")
        }
        if !rules.contains(where: { $0.output == .virtual }) {
            lines.append("no rule sets output: virtual: every device is observed, none is grabbed")
        }
        let chord = panicChord.sorted().map { EventNames.codeText(type: EventType.key, code: $0) }
        lines.append("panic chord: \(chord.joined(separator: " + ")) (held together on a grabbed device, it releases every grab)")
        return lines
    }
}

extension FilterConfig.Match {
    /// The match as the configuration writes it: `class: keyboard, phys: "usb-*/input0"`.
    public var summary: String {
        var parts: [String] = []
        if let deviceClass { parts.append("class: \(deviceClass.rawValue)") }
        if let name { parts.append("name: \(name.debugDescription)") }
        if let vendor, let product {
            parts.append("id: \(Self.hex(vendor)):\(Self.hex(product))")
        }
        if let phys { parts.append("phys: \(phys.debugDescription)") }
        if let uniq { parts.append("uniq: \(uniq.debugDescription)") }
        if !properties.isEmpty {
            let props = properties.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.debugDescription)" }
            parts.append("properties: { \(props.joined(separator: ", ")) }")
        }
        return parts.joined(separator: ", ")
    }

    /// Four lower-case hex digits, as `id:` is written.
    private static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
