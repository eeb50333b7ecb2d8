@testable import OptionValues
import Testing

/// The numeric option values of evflowd and evflowctl (issue #25 finding 2): refused with the
/// reason at parse time, or a value every consumer computes with without overflow.
@Suite("option values (issue #25)") struct OptionValuesTests {
    /// Whether `parse` refuses `text` with a reason.
    static func refused(_ text: String, _ parse: (String) throws -> Any) -> Bool {
        do {
            _ = try parse(text)
            return false
        } catch let error as OptionValueError {
            return !error.reason.isEmpty
        } catch {
            return false
        }
    }

    /// `--speed 0.0000000001` trapped in ReplaySource; `--speed -1` said "Missing value".
    @Test("--speed: 0 is as fast as possible; the range's ends are accepted; everything else refused")
    func speed() throws {
        #expect(try OptionValues.replaySpeed("0") == .infinity)
        #expect(try OptionValues.replaySpeed("1") == 1)
        #expect(try OptionValues.replaySpeed("2.5") == 2.5)
        #expect(try OptionValues.replaySpeed("0.001") == 0.001)
        #expect(try OptionValues.replaySpeed("1e6") == 1_000_000)
        for bad in ["0.0000000001", "-1", "-0.5", "1000001", "1e300", "nan", "inf", "-inf", "0x1p3", "", "fast", "1,5"] {
            let refused = Self.refused(bad) { try OptionValues.replaySpeed($0) }
            #expect(refused, "\(bad)")
        }
        do {
            _ = try OptionValues.replaySpeed("-1")
        } catch {
            #expect(error.description == "must be 0 (as fast as possible) or a pace from 0.001 to 1000000")
        }
    }

    /// `--idle-timeout 10000000000` overflowed in ClientConnection when a client connected.
    @Test("--idle-timeout: whole seconds from 1 to 365 days")
    func idleTimeout() throws {
        #expect(try OptionValues.idleTimeout("1") == .seconds(1))
        #expect(try OptionValues.idleTimeout("31536000") == .seconds(31_536_000))
        for bad in ["0", "-5", "10000000000", "31536001", "9223372036854775807", "99999999999999999999", "1.5", "nan", ""] {
            let refused = Self.refused(bad) { try OptionValues.idleTimeout($0) }
            #expect(refused, "\(bad)")
        }
    }

    @Test("--max-clients and --max-clients-per-user: 1 to 1,000,000")
    func clientLimits() throws {
        #expect(try OptionValues.clientLimit("1") == 1)
        #expect(try OptionValues.clientLimit("1000000") == 1_000_000)
        for bad in ["0", "-1", "1000001", "9223372036854775808", "x"] {
            let refused = Self.refused(bad) { try OptionValues.clientLimit($0) }
            #expect(refused, "\(bad)")
        }
    }

    /// `evflowctl record --all -o x --duration 1e300` crashed converting to nanoseconds.
    @Test("record --duration: 1 ms to 365 days, as nanoseconds")
    func recordDuration() throws {
        #expect(try OptionValues.recordDuration("0.001") == 1_000_000)
        #expect(try OptionValues.recordDuration("2.5") == 2_500_000_000)
        #expect(try OptionValues.recordDuration("31536000") == 31_536_000 * 1_000_000_000)
        for bad in ["1e300", "0", "-1", "0.0001", "31536001", "nan", "inf", "1e309", ""] {
            let refused = Self.refused(bad) { try OptionValues.recordDuration($0) }
            #expect(refused, "\(bad)")
        }
    }

    /// Issue #34: `evflowctl top --interval 1e10` (or `inf`) trapped in `Int64(interval * 1e9)`.
    @Test("top --interval: 0.1 s to a day, as nanoseconds; 1e10, inf, nan, negative refused")
    func topInterval() throws {
        #expect(try OptionValues.topInterval("0.1") == 100_000_000)
        #expect(try OptionValues.topInterval("1") == 1_000_000_000)
        #expect(try OptionValues.topInterval("86400") == 86_400 * 1_000_000_000)
        for bad in ["1e10", "inf", "nan", "-1", "0", "0.09", "86401", "1e309", "0x1p3", ""] {
            let refused = Self.refused(bad) { try OptionValues.topInterval($0) }
            #expect(refused, "\(bad)")
        }
    }
}
