import EvflowProtocol

/// One optional event stream (`--events SPEC`, docs/mqtt.md "Event streams"): a `WATCH`
/// selection of its own — the socket's filters, rate limit included, applied by evflowd — and
/// how its frames are published.
///
/// SPEC is `;`-separated `key=value` items, lists `,`-separated:
/// `devices=keyboard,0003:046d:c52b-1a2b3c4d;types=EV_KEY,EV_SW;codes=BTN_LEFT;max-rate=50;per-code`.
/// `per-code` publishes each event on `…/events/<TYPE>/<CODE>` instead of each frame on `…/events`;
/// `stream=raw` watches the unfiltered stream.
public struct EventStreamSpec: Hashable, Sendable {
    /// The `WATCH` the stream's connection sends.
    public var watch: WatchRequest
    /// One message per event on its code's topic, instead of one per frame.
    public var perCode: Bool
    /// The SPEC as given (for logs).
    public var text: String

    /// Parses SPEC; names are checked as evflowd checks a `WATCH` (its error messages).
    public init(parsing text: String) throws(ConfigError) {
        self.text = text
        var devices: [String] = [], types: [String] = [], codes: [String] = []
        var stream = StreamKind.filtered
        var maxRate: Double?
        var perCode = false
        for item in text.split(separator: ";", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces }
            let key = parts[0]
            let value = parts.count > 1 ? parts[1] : nil
            func list() throws(ConfigError) -> [String] {
                guard let value, !value.isEmpty else { throw ConfigError("--events '\(text)': '\(key)' needs a value") }
                return value.split(separator: ",").map { String($0).trimmingSpaces }
            }
            switch key {
            case "devices": devices += try list()
            case "types": types += try list()
            case "codes": codes += try list()
            case "max-rate":
                guard let value, let r = Double(value) else { throw ConfigError("--events '\(text)': max-rate needs a number") }
                maxRate = r
            case "stream":
                guard let value, let s = StreamKind(rawValue: value), s != .gestures else {
                    throw ConfigError("--events '\(text)': stream must be filtered or raw")
                }
                stream = s
            case "per-code":
                guard value == nil else { throw ConfigError("--events '\(text)': per-code takes no value") }
                perCode = true
            case "": continue
            default:
                throw ConfigError("--events '\(text)': unknown item '\(key)' (devices, types, codes, max-rate, stream, per-code)")
            }
        }
        do {
            watch = try WatchRequest.checked(devices: devices, types: types, codes: codes, stream: stream, maxRate: maxRate)
        } catch {
            throw ConfigError("--events '\(text)': \(error.message)")
        }
        self.perCode = perCode
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
