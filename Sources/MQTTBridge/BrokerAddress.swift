/// The broker as `--broker` gives it: `host`, `host:port`, `[v6]`, `[v6]:port`, a bare IPv6
/// address (`::1`), or an `mqtt://host[:port]` / `mqtts://host[:port]` URL — the forms
/// mosquitto_sub's `-L` and other MQTT clients take. `mqtts` means TLS (port 8883 unless
/// given), as it does for them.
public struct BrokerAddress: Hashable, Sendable {
    /// Host name or address, without brackets.
    public var host: String
    /// The port, if the address gives one.
    public var port: Int?
    /// `mqtts://`: TLS; nil when the address says nothing about it (no scheme).
    public var tls: Bool?

    /// Parses `--broker`'s value; a form it cannot take is refused with the reason, never
    /// taken whole as a host name (which would fail name lookup for ever).
    public init(parsing text: String) throws(ConfigError) {
        func refuse(_ why: String) -> ConfigError { ConfigError("--broker '\(text)': \(why)") }
        var rest = Substring(text)
        if let scheme = rest.range(of: "://") {
            switch rest[..<scheme.lowerBound].lowercased() {
            case "mqtt": tls = false
            case "mqtts": tls = true
            default: throw refuse("unsupported scheme (use mqtt:// or mqtts://)")
            }
            rest = rest[scheme.upperBound...]
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            if rest.contains("@") { throw refuse("no user in the address (use --username and --password-file)") }
            if rest.contains("/") || rest.contains("?") || rest.contains("#") { throw refuse("a broker URL has no path or query") }
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw refuse("'[' without ']' around an IPv6 address") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("expected ':port' after ']'") }
                portText = after.dropFirst()
            }
        } else if rest.filter({ $0 == ":" }).count == 1, let colon = rest.firstIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)   // a name, an IPv4 address or a bare IPv6 address (no port)
        }
        guard !host.isEmpty else { throw refuse("no host") }
        guard !host.contains(where: { $0 == " " || $0 == "[" || $0 == "]" || $0 == "/" }) else {
            throw refuse("not a host name or address")
        }
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { throw refuse("the port must be from 1 to 65535") }
            port = p
        }
    }
}
