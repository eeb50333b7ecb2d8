import Foundation
import ReactiveTesting
import Testing
import Recording

/// Parse-only throughput on ≥ 1M events, run only when asked (it needs a release build to mean
/// anything): `EVFLOW_RECORDING_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter ParseThroughput`
/// (`-enable-testing` because the other files of this target use `@testable import`).
@Suite("ParseThroughput", .ownLiveResources, .enabled(if: ProcessInfo.processInfo.environment["EVFLOW_RECORDING_BENCH"] != nil))
struct ParseThroughputTests {
    /// The largest shipped recordings' `E:` lines, repeated with times shifted to stay monotonic.
    static func millionEventFile() throws -> (bytes: [UInt8], events: Int) {
        var out = Array("N: Benchmark\nI: 0003 0001 0002 0003\n".utf8)
        var chunks: [(events: [(Int64, Substring)], span: Int64)] = []
        for (events, description) in [("mice/PS2 Generic Mouse.events", "mice/PS2 Generic Mouse.desc"),
                                      ("tablets/dell_canvas_pen.evemu", nil),
                                      ("trackpoints/TPPS2 IBM TrackPoint.events", "trackpoints/TPPS2 IBM TrackPoint.desc"),
                                      ("touchpads/bcm5974.three-finger-click.events", nil)] as [(String, String?)] {
            let recording = try EvemuReader.read(events: Fixtures.evemu(events),
                                                 description: description.map(Fixtures.evemu))
            let text = try String(contentsOf: Fixtures.evemu(events), encoding: .utf8)
            // Keep each line's text after the timestamp (fields and comment) as recorded.
            let tails = text.split(separator: "\n").filter { $0.hasPrefix("E:") }
                .map { $0.split(separator: " ", maxSplits: 2)[2] }
            let micros = recording.devices[0].events.map { $0.time / 1000 }
            chunks.append((Array(zip(micros, tails)), micros.last! + 1000))
        }
        var count = 0
        var offset: Int64 = 0
        while count < 1_000_000 {
            for chunk in chunks {
                for (micros, tail) in chunk.events {
                    let t = offset + micros
                    let fraction = String(t % 1_000_000)
                    out.append(contentsOf: "E: \(t / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction) \(tail)\n".utf8)
                }
                count += chunk.events.count
                offset += chunk.span
            }
        }
        return (out, count)
    }

    @Test func atLeastTwoMillionEventsPerSecond() throws {
        let (bytes, count) = try Self.millionEventFile()
        var best = Double.infinity
        for _ in 0..<5 {
            let start = ContinuousClock.now
            let recording = try EvemuReader.parse(bytes, file: "million")
            let elapsed = ContinuousClock.now - start
            #expect(recording.devices[0].events.count == count)
            best = min(best, Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
        }
        let rate = Double(count) / best
        print("EvemuReader parse-only: \(count) events in \(Int(best * 1000)) ms = \(Int(rate)) events/s")
        #expect(rate >= 2_000_000)
    }
}
