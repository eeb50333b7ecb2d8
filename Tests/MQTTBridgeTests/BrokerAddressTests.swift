import MQTTBridge
import Testing

/// `--broker` (issue #25 finding 8): `127.0.0.1:1884` was taken whole as a host name and
/// retried "Lookup error" for ever.
@Suite("broker address") struct BrokerAddressTests {
    static func address(_ text: String) throws(ConfigError) -> BrokerAddress { try BrokerAddress(parsing: text) }

    @Test("host, host:port, [v6]:port, bare IPv6, mqtt:// and mqtts:// URLs")
    func accepted() throws {
        let cases: [(String, String, Int?, Bool?)] = [
            ("localhost", "localhost", nil, nil),
            ("127.0.0.1:1884", "127.0.0.1", 1884, nil),
            ("mqtt.local:8883", "mqtt.local", 8883, nil),
            ("[::1]", "::1", nil, nil),
            ("[fe80::1%eth0]:1883", "fe80::1%eth0", 1883, nil),
            ("::1", "::1", nil, nil),
            ("mqtt://broker", "broker", nil, false),
            ("mqtt://broker:1884/", "broker", 1884, false),
            ("mqtts://broker.example.org", "broker.example.org", nil, true),
            ("MQTTS://[2001:db8::2]:8884", "2001:db8::2", 8884, true),
        ]
        for (text, host, port, tls) in cases {
            let a = try Self.address(text)
            #expect(a.host == host && a.port == port && a.tls == tls, "\(text) → \(a)")
        }
    }

    @Test("forms it cannot take are refused with the reason", arguments: [
        ("127.0.0.1:0", "the port must be from 1 to 65535"),
        ("host:65536", "the port must be from 1 to 65535"),
        ("host:port", "the port must be from 1 to 65535"),
        ("host:", "the port must be from 1 to 65535"),
        (":1883", "no host"),
        ("", "no host"),
        ("mqtt://", "no host"),
        ("ws://broker", "unsupported scheme"),
        ("mqtt://user:pw@broker", "no user in the address"),
        ("mqtt://broker/topic", "no path or query"),
        ("[::1", "'[' without ']'"),
        ("[::1]1883", "expected ':port' after ']'"),
        ("my broker", "not a host name or address"),
    ])
    func refused(text: String, reason: String) {
        do {
            let a = try Self.address(text)
            Issue.record("\(text) accepted as \(a)")
        } catch {
            #expect(error.description.hasPrefix("--broker '\(text)': "), "\(error)")
            #expect(error.description.contains(reason), "\(error)")
        }
    }
}
