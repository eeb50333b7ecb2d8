// R1 — replay throughput (docs/benchmarks.md): parse an evemu recording of ≥ 1,000,000 events and
// run it through the full default filter pipeline and state store in virtual time.
//
// Input: the largest shipped evemu recordings (Tests/Fixtures/recordings), each repeated with
// its times shifted so they stay monotonic, until all of them together hold ≥ 1,000,000
// events (SYN_REPORTs included, as `Recording.eventCount` counts them), written as evemu text
// in memory with EvemuWriter. Rows, interleaved, median of `--reps` (default 5):
//   parse     EvemuReader.parse of every text
//   pipeline  parse + ReplaySource on a VirtualTimeScheduler → DeviceHub (default FilterConfig, or
//             the file EVFLOW_R1_CONFIG names)
//             → StateStore, run to the end, everything disposed
// Prints events/s for both and a checksum (frames and events delivered, from each device's
// counters right before its removal) that must be the same in every repetition.
//
//   swift run -c release --package-path Benchmarks ReplayThroughput [--reps N] [--events N] [--recordings DIR]
#if canImport(DeviceStreams)
import DeviceStreams
#endif
import Foundation
import InputModel
import Pipeline
import Reactive
import Recording

struct Options {
    var reps = 5
    var minimumEvents = 1_000_000
    var recordings = URL(fileURLWithPath: #filePath)   // Benchmarks/Sources/ReplayThroughput/main.swift
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/recordings")

    init(_ args: [String]) {
        var i = 1
        while i < args.count {
            let value = i + 1 < args.count ? args[i + 1] : ""
            switch args[i] {
            case "--reps": reps = Int(value) ?? reps
            case "--events": minimumEvents = Int(value) ?? minimumEvents
            case "--recordings": recordings = URL(fileURLWithPath: value)
            default:
                FileHandle.standardError.write(Data("unknown argument \(args[i])\n".utf8))
                exit(2)
            }
            i += 2
        }
    }
}

/// The largest shipped evemu recordings (by file size; .events files take their .desc).
func largestRecordings(in folder: URL, count: Int) throws -> [(name: String, recording: Recording)] {
    let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }
        .filter { $0.hasSuffix(".events") || $0.hasSuffix(".evemu") } ?? []
    func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(path).path)[.size] as? Int) ?? 0
    }
    return try files.sorted { size($0) > size($1) }.prefix(count).map { path in
        (path, try Recording.read(contentsOf: folder.appendingPathComponent(path)))
    }
}

/// `device` with its events repeated `times` times, each copy shifted to start 10 ms after
/// the previous one ended.
func repeated(_ device: RecordedDevice, times: Int) -> RecordedDevice {
    guard let first = device.events.first?.time, let last = device.events.last?.time else { return device }
    let span = last - first + 10_000_000
    var events: [InputEvent] = []
    events.reserveCapacity(device.events.count * times)
    for copy in 0..<times {
        let shift = Int64(copy) * span
        for var e in device.events {
            e.time += shift
            events.append(e)
        }
    }
    var out = device
    out.events = events
    return out
}

/// What a pipeline run delivered (must not vary between runs).
struct Checksum: Equatable, CustomStringConvertible {
    var framesOut: UInt64 = 0
    var eventsOut: UInt64 = 0
    var dropped: UInt64 = 0
    var description: String { "framesOut=\(framesOut) eventsOut=\(eventsOut) dropped=\(dropped)" }
}

func parseAll(_ texts: [[UInt8]]) -> [Recording] {
    texts.enumerated().map { i, bytes in
        do { return try EvemuReader.parse(bytes, file: "r1-\(i).evemu") } catch { fatalError("\(error)") }
    }
}

/// The configuration: the default, or the file `EVFLOW_R1_CONFIG` names (the wheel filter's
/// cost is measured with `wheel:` on, docs/benchmarks.md).
let r1Config: FilterConfig = {
    guard let path = ProcessInfo.processInfo.environment["EVFLOW_R1_CONFIG"] else { return FilterConfig() }
    do { return try FilterConfig.load(path: path) } catch { fatalError("\(error)") }
}()

func runPipeline(_ recordings: [Recording]) -> Checksum {
    let scheduler = VirtualTimeScheduler()
    let replay = ReplaySource(recordings: recordings, scheduler: scheduler)
    let store = StateStore()
    let hub = DeviceHub(store: store, config: r1Config, scheduler: scheduler, latencyClock: .replay)
    // The checksum is read from each device's slot once the replay is over (a slot keeps its
    // last state after the device leaves the store). It used to be read by a `do(onCompleted:)`
    // on every device's frames: an operator there is one more delivery per frame, which the
    // daemon does not make, counted as the pipeline's (issue #35, docs/benchmarks.md).
    var slots: [StateStore.Slot] = []
    let running = hub.run(replay.devices.do(onNext: { stream in
        let id = stream.info.id
        // The hub opens the device's session as the stream passes; its slot is there after.
        _ = scheduler.schedule {
            guard let slot = store.slot(of: id) else { fatalError("R1: no slot for \(id)") }
            slots.append(slot)
        }
    }))
    scheduler.run()
    running.dispose()
    scheduler.run()   // the hub is disposed on its scheduler
    var sum = Checksum()
    for slot in slots {
        let c = slot.snapshot().counters
        sum.framesOut &+= c.framesOut
        sum.eventsOut &+= c.eventsOut
        for k in FilterKind.allCases { sum.dropped &+= c[k].dropped }
    }
    return sum
}

func seconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

let options = Options(CommandLine.arguments)
let sources = try largestRecordings(in: options.recordings, count: 4)
let perPass = sources.reduce(0) { $0 + $1.recording.eventCount }
let times = max(1, (options.minimumEvents + perPass - 1) / perPass)
let texts: [[UInt8]] = sources.flatMap { source in
    source.recording.devices.map { EvemuWriter.write(repeated($0, times: times)) }
}
let check = parseAll(texts)
let totalEvents = check.reduce(0) { $0 + $1.eventCount }
print("R1 input: \(sources.map(\.name).joined(separator: ", ")) × \(times) = \(totalEvents) events "
    + "(\(texts.reduce(0) { $0 + $1.count } / 1_000_000) MB of evemu text)")

var parseTimes: [Double] = []
var pipelineTimes: [Double] = []
var checksums: [Checksum] = []
for _ in 0..<options.reps {
    parseTimes.append(seconds { precondition(parseAll(texts).reduce(0) { $0 + $1.eventCount } == totalEvents) })
    var sum = Checksum()
    pipelineTimes.append(seconds { sum = runPipeline(parseAll(texts)) })
    checksums.append(sum)
}
guard Set(checksums.map(\.description)).count == 1 else { fatalError("checksums differ: \(checksums)") }
let parseRate = Double(totalEvents) / median(parseTimes)
let pipelineRate = Double(totalEvents) / median(pipelineTimes)
func f(_ x: Double) -> String { String(format: "%.2f", x / 1e6) }
print("| row | median s | events/s | runs (s) |")
print("|---|---|---|---|")
print("| parse only | \(String(format: "%.3f", median(parseTimes))) | \(f(parseRate)) M | "
    + parseTimes.map { String(format: "%.3f", $0) }.joined(separator: " ") + " |")
print("| parse + pipeline + store | \(String(format: "%.3f", median(pipelineTimes))) | \(f(pipelineRate)) M | "
    + pipelineTimes.map { String(format: "%.3f", $0) }.joined(separator: " ") + " |")
print("pipeline alone (difference of medians): "
    + "\(f(Double(totalEvents) / max(median(pipelineTimes) - median(parseTimes), 1e-9))) M events/s")
print("checksum: \(checksums[0]) (goal: ≥ 10 M events/s for parse + pipeline, within 2× of parse only)")
