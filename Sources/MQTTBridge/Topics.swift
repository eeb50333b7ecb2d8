/// Where the bridge publishes (docs/mqtt.md, "Topics"). Every topic starts with `prefix`
/// (default `evflow/<hostname>`); Home Assistant discovery documents go under
/// `discoveryPrefix` (default `homeassistant`).
public struct TopicLayout: Hashable, Sendable {
    /// The prefix of every bridge topic, without a trailing `/`.
    public let prefix: String
    /// Home Assistant's discovery prefix.
    public let discoveryPrefix: String
    /// The host name as used in ids (discovery node id, unique ids).
    public let hostname: String

    /// A layout; `prefix` nil means `evflow/<hostname>`. Throws `ConfigError` for a prefix
    /// that is empty or holds a wildcard (`+`, `#`), a NUL, or a leading or trailing `/`.
    public init(hostname: String, prefix: String? = nil, discoveryPrefix: String = "homeassistant") throws(ConfigError) {
        self.hostname = hostname
        let p = prefix ?? "evflow/" + TopicLayout.segment(hostname)
        try TopicLayout.check(p, what: "--prefix")
        try TopicLayout.check(discoveryPrefix, what: "--ha-prefix")
        self.prefix = p
        self.discoveryPrefix = discoveryPrefix
    }

    // Both checks below look at Unicode scalars, never at Swift Characters: `/` followed by a
    // combining mark (U+0301) is one Character that is not "/", yet its bytes hold a `/` that the
    // broker reads as a level separator (and `+`/`#` as a wildcard it refuses to publish to).
    static func check(_ p: String, what: String) throws(ConfigError) {
        if p.isEmpty { throw ConfigError("\(what) must not be empty") }
        if p.unicodeScalars.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) {
            throw ConfigError("\(what) '\(p)' must not contain the MQTT wildcards '+' or '#' (or NUL)")
        }
        if p.utf8.first == UInt8(ascii: "/") || p.utf8.last == UInt8(ascii: "/") {
            throw ConfigError("\(what) '\(p)' must not start or end with '/'")
        }
        if p.utf8.count > 32_000 { throw ConfigError("\(what) is too long") }
    }

    /// The most bytes a segment made by `segment` takes: with the longest prefix (32,000) and
    /// the fixed levels, a topic stays under MQTT's 65,535.
    public static let maxSegmentBytes = 1024

    /// One topic level from arbitrary text: `/`, `+`, `#` and NUL become `_` (scalar by
    /// scalar, so a combining mark after them changes nothing); empty text is `_`; text of more
    /// than `maxSegmentBytes` bytes is cut (at a scalar) and ends in `~` and a hash of the whole
    /// text, so two long ids that share a beginning still get two topics.
    public static func segment(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            scalars.append(u == "/" || u == "+" || u == "#" || u == "\0" ? "_" : u)
        }
        let s = String(scalars)
        if s.isEmpty { return "_" }
        guard s.utf8.count > maxSegmentBytes else { return s }
        // FNV-1a 64 of the text: stable across runs (Hasher is seeded per process).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        let tail = "~" + String(hash, radix: 16)
        var cut = String.UnicodeScalarView(), bytes = 0
        for u in s.unicodeScalars {
            let n = String(u).utf8.count
            if bytes + n > maxSegmentBytes - tail.utf8.count { break }
            cut.append(u)
            bytes += n
        }
        return String(cut) + tail
    }

    /// An id for Home Assistant (`[a-zA-Z0-9_-]`): other characters become `_`, letters lowercase.
    public static func objectID(_ text: String) -> String {
        String(text.lowercased().map { c in
            c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "-") ? c : "_"
        })
    }

    /// The bridge's availability (`online` retained; the last will says `offline`).
    public var bridgeAvailability: String { prefix + "/bridge/availability" }
    /// evflowd's availability as the bridge sees it (`online` while its socket answers).
    public var daemonAvailability: String { prefix + "/evflowd/availability" }
    /// The bridge's counters (retained JSON).
    public var bridgeStats: String { prefix + "/bridge/stats" }
    /// A device's retained description.
    public func description(_ device: String) -> String { prefix + "/devices/" + TopicLayout.segment(device) + "/description" }
    /// A device's retained state document.
    public func state(_ device: String) -> String { prefix + "/devices/" + TopicLayout.segment(device) + "/state" }
    /// A device's retained battery document (protocol 1.8; docs/mqtt.md, "Battery").
    public func battery(_ device: String) -> String { prefix + "/devices/" + TopicLayout.segment(device) + "/battery" }
    /// A device's event stream (one message per frame).
    public func events(_ device: String) -> String { prefix + "/devices/" + TopicLayout.segment(device) + "/events" }
    /// One event code's stream (one message per event).
    public func events(_ device: String, type: String, code: String) -> String {
        events(device) + "/" + TopicLayout.segment(type) + "/" + TopicLayout.segment(code)
    }
    /// A Home Assistant discovery config topic.
    public func discovery(component: String, object: String) -> String {
        discoveryPrefix + "/" + component + "/evflow_" + TopicLayout.objectID(hostname) + "/" + TopicLayout.objectID(object) + "/config"
    }
}

/// A configuration mistake, for people (the executable prints it and exits 64).
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
