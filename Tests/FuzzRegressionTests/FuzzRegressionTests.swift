import Foundation
import Testing
@testable import FuzzTargets
import InputModel
@testable import Recording
import Pipeline

/// Replays the fuzz regression corpus (`Tests/Fixtures/fuzz-regressions/<target>/`) and the
/// shipped fixtures through the same invariant checks the fuzz targets run (docs/reliability.md).
struct FuzzRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func files(under relativePath: String) -> [URL] {
        let root = fixtures.appendingPathComponent(relativePath)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return []
        }
        return walker.compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .sorted { $0.path < $1.path }
    }

    @Test(arguments: FuzzTarget.allCases)
    func regressionCorpusPasses(_ target: FuzzTarget) throws {
        let files = Self.files(under: "fuzz-regressions/\(target.rawValue)")
        // Every target has a corpus; an empty or missing directory would make this test vacuous.
        #expect(!files.isEmpty, "no files in Tests/Fixtures/fuzz-regressions/\(target.rawValue)")
        for file in files {
            let bytes = try contents(of: file)
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try target.check(bytes) }
        }
    }

    /// The seed corpora of scripts/fuzz, checked here too: every shipped recording and
    /// malformed file passes its reader's invariant.
    @Test func shippedRecordingsPassTheirInvariants() throws {
        var checked = 0
        for file in Self.files(under: "recordings") + Self.files(under: "handmade") + Self.files(under: "malformed")
            + Self.files(under: "sessions") + Self.files(under: "sensors") {
            let target: FuzzTarget
            switch file.pathExtension {
            case "evemu", "events", "desc": target = .evemu
            case "evtest": target = .evtest
            case "yml", "yaml": target = .libinputRecord
            case "session": target = .session
            case "sensors": target = .sensors   // issue #34
            default: continue
            }
            let bytes = try contents(of: file)
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try target.check(bytes) }
            checked += 1
        }
        #expect(checked >= 20)
    }

    /// Issue #25: what `--check-config` accepts, a SIGHUP reload applies without trapping.
    /// Every shipped configuration — docs/evflow.example.yaml and each YAML block of
    /// docs/configuration.md that is a whole configuration — loads as `--check-config` loads
    /// it, and passes the `filter-config` invariant: its filters build and run for every probe
    /// device, and a running hub reloads it (the regression corpus above gets the same check).
    @Test func everyShippedConfigurationBuildsAndReloads() throws {
        let root = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent()
        let example = root.appendingPathComponent("docs/evflow.example.yaml").path
        _ = try FilterConfig.load(path: example)
        #expect(throws: Never.self) { try FuzzTarget.filterConfig.check(contents(of: URL(fileURLWithPath: example))) }
        let guide = String(decoding: try contents(of: root.appendingPathComponent("docs/configuration.md")), as: UTF8.self)
        var blocks: [String] = [], current: [Substring]?
        for line in guide.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```yaml" { current = [] } else if line == "```", let lines = current {
                blocks.append(lines.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        var accepted = 0
        for block in blocks {
            guard (try? FilterConfig.parse(yaml: block)) != nil else { continue }   // a fragment, not a file
            #expect(throws: Never.self, "\(block)") { try FuzzTarget.filterConfig.check(Array(block.utf8)) }
            accepted += 1
        }
        #expect(accepted >= 1, "no whole configuration among \(blocks.count) YAML blocks of docs/configuration.md")
    }

    /// The checks do fail: a broken invariant is reported, not swallowed.
    @Test func aFramingDifferenceIsReported() {
        var stream = Array("ab\r\ncd\n".utf8)[...]
        #expect(FuzzTarget.referenceFraming(stream, limit: 16) == [.line(Array("ab".utf8)[...]), .line(Array("cd".utf8)[...])])
        stream = Array("0123456789abcdefXY".utf8)[...]
        #expect(FuzzTarget.referenceFraming(stream, limit: 16) == [.overlong])
    }

    /// Found by fuzzing (`evtest/found-view-overflow.evtest`): the view's absolute times were
    /// nanoseconds, which overflowed (a trap in the check itself) for a recording starting in
    /// 2023 with an event 485 years later — a time the reader holds and the writer writes.
    @Test func evemuViewTimesAreAbsoluteMicrosecondsWithoutOverflow() throws {
        let info = DeviceInfo(name: "m", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              capabilities: [0x02: [0]])
        let late = InputEvent(time: Int64.max / 1000 * 1000, type: 0x02, code: 0, value: 1)
        let early = InputEvent(time: -1, type: 0x02, code: 0, value: 1)
        let start: Int64 = 1_700_000_001_000_000
        let view = FuzzTarget.evemuView(RecordedDevice(info: info, events: [early, late]), startMicroseconds: start)
        #expect(view.events.map(\.time) == [start - 1, start + Int64.max / 1000])
        let file = try #require(Self.files(under: "fuzz-regressions/evtest").first { $0.lastPathComponent == "found-view-overflow.evtest" })
        #expect(throws: Never.self) { try FuzzTarget.evtest.check(contents(of: file)) }
    }

    @Test func evemuViewDropsWhatTheFormatCannotHold() {
        let info = DeviceInfo(name: "pad", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              phys: "usb-1", capabilities: [0x03: [0], 0x15: []],
                              absInfo: [0: AbsInfo(value: 7, minimum: 0, maximum: 100)])
        let view = FuzzTarget.evemuView(RecordedDevice(info: info, events: []))
        #expect(view.info.absInfo[0]?.value == 0)
        #expect(view.info.capabilities[0x15] == nil)
        #expect(view.info.capabilities[0x03] == [0])
        #expect(view.info.phys == nil)
    }
}

/// The file's bytes, read as the readers read them (`RecordingLimits.read`). Not
/// `Data(contentsOf:)`: for an empty file, swift-corelibs-foundation (Swift 6.3.1) leaks the
/// 4 KiB buffer it read into, which LeakSanitizer reports in the AddressSanitizer run.
private func contents(of file: URL) throws -> [UInt8] {
    try RecordingLimits.read(file.path, limit: RecordingLimits.maxFileBytes)
}

