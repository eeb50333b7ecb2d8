/// The numeric command-line option values of `evflowd` and `evflowctl`, parsed and
/// range-checked in one place: the executables' ArgumentParser options call these (their
/// `transform:`), and the `options` fuzz target (Fuzz/FuzzTargets) drives the very same
/// functions. An accepted value is one every consumer can compute with — no duration, pace
/// or count that overflows later (docs/reliability.md, "Hostile input to evflowd").
public enum OptionValues {
    /// `--speed` of a replay (besides 0, "as fast as possible"): 1/1000 to 1,000,000 times the
    /// recorded pace. Slower than 1/1000 would stretch a one-second recording past a quarter
    /// of an hour; the limits keep every scaled recording time a finite `Double`.
    public static let replaySpeeds: ClosedRange<Double> = 0.001...1_000_000

    /// `--idle-timeout` in seconds: 1 s to 365 days (a timer NIO can arm on any machine).
    public static let idleTimeoutSeconds: ClosedRange<Int> = 1...(365 * 86_400)

    /// `--max-clients` and `--max-clients-per-user`.
    public static let clientLimits: ClosedRange<Int> = 1...1_000_000

    /// `evflowctl record --duration` in seconds: 1 ms to 365 days.
    public static let recordSeconds: ClosedRange<Double> = 0.001...(365 * 86_400)

    /// `evflowctl top --interval` in seconds: 0.1 s to a day. Shorter floods the daemon with
    /// queries; longer is no live view (issue #34: `1e10` and `inf` trapped converting to ns).
    public static let topIntervalSeconds: ClosedRange<Double> = 0.1...86_400

    /// `--speed`: the pace, `.infinity` for 0 (as fast as possible).
    public static func replaySpeed(_ text: String) throws(OptionValueError) -> Double {
        let reason = "must be 0 (as fast as possible) or a pace from \(show(replaySpeeds.lowerBound)) to \(show(replaySpeeds.upperBound))"
        guard let value = decimal(text) else { throw OptionValueError(reason) }
        if value == 0 { return .infinity }
        guard replaySpeeds.contains(value) else { throw OptionValueError(reason) }
        return value
    }

    /// `--idle-timeout`: whole seconds.
    public static func idleTimeout(_ text: String) throws(OptionValueError) -> Duration {
        guard let seconds = Int(text), idleTimeoutSeconds.contains(seconds) else {
            throw OptionValueError("must be a whole number of seconds from \(idleTimeoutSeconds.lowerBound) to \(idleTimeoutSeconds.upperBound) (365 days)")
        }
        return .seconds(seconds)
    }

    /// `--max-clients`, `--max-clients-per-user`.
    public static func clientLimit(_ text: String) throws(OptionValueError) -> Int {
        guard let n = Int(text), clientLimits.contains(n) else {
            throw OptionValueError("must be a whole number from \(clientLimits.lowerBound) to \(clientLimits.upperBound)")
        }
        return n
    }

    /// `record --duration`: seconds as nanoseconds.
    public static func recordDuration(_ text: String) throws(OptionValueError) -> Int64 {
        guard let seconds = decimal(text), recordSeconds.contains(seconds) else {
            throw OptionValueError("must be a number of seconds from \(show(recordSeconds.lowerBound)) to \(show(recordSeconds.upperBound)) (365 days)")
        }
        return Int64((seconds * 1e9).rounded())   // at most 3.2e16: far inside Int64
    }

    /// `top --interval`: seconds as nanoseconds.
    public static func topInterval(_ text: String) throws(OptionValueError) -> Int64 {
        guard let seconds = decimal(text), topIntervalSeconds.contains(seconds) else {
            throw OptionValueError("must be a number of seconds from \(show(topIntervalSeconds.lowerBound)) to \(show(topIntervalSeconds.upperBound)) (a day)")
        }
        return Int64((seconds * 1e9).rounded())   // at most 8.64e13
    }

    /// A decimal number as a person writes one (`2`, `0.5`, `-1`, `1e3`): not `nan`, `inf`
    /// or a hexadecimal float, which `Double(_:)` would also read.
    static func decimal(_ text: String) -> Double? {
        let allowed = text.utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e")
                || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
        }
        guard allowed, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `0.001`, `1000000`: a bound as the messages show it.
    static func show(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// An option value out of range or not a number; `description` is what ArgumentParser shows
/// after "The value 'X' is invalid for '--option <option>': ".
public struct OptionValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the value must be.
    public var reason: String

    /// Creates an error.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
