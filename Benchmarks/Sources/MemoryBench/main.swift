// M1 (docs/benchmarks.md): RSS of a daemon-like process — 20 replayed devices through the default
// filter pipeline and state store, the state server, and 10 watching clients in separate
// processes (so their memory is not counted).
//
// usage: MemoryBench [--fixtures DIR] [--seconds 10] [--clients 10] [--devices 20]
//        MemoryBench --client SOCKET      (internal: one watching client)
// FoundationEssentials as the daemon imports it (full Foundation would link ICU in again).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel
import Logging
import Pipeline
import Reactive
import Recording
import StateServer
#if canImport(Glibc)
import Glibc
#endif

func argument(_ name: String, _ fallback: String?) -> String? {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: name), i + 1 < args.count { return args[i + 1] }
    return fallback
}

/// Client mode: WATCH everything and read until EOF.
if let socketPath = argument("--client", nil) {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in socketPath.utf8.enumerated() { p[i] = b } }
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard r == 0 else { exit(69) }
    let req = Array("{\"class\":\"WATCH\"}\n".utf8)
    _ = req.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var buf = [UInt8](repeating: 0, count: 65536)
    while buf.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
    exit(0)
}

func status(_ field: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

let here = URL(fileURLWithPath: #filePath)
let defaultFixtures = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/recordings/evemu-devices").path
let fixtures = argument("--fixtures", defaultFixtures)!
let seconds = Double(argument("--seconds", "10")!)!
let clientCount = Int(argument("--clients", "10")!)!
let deviceCount = Int(argument("--devices", "20")!)!

let rssStart = status("VmRSS")
// Every evemu fixture, repeated until there are `deviceCount` devices (repeats get #2 ids).
let files = ((try? FileManager.default.subpathsOfDirectory(atPath: fixtures)) ?? [])
    .filter { $0.hasSuffix(".events") || $0.hasSuffix(".evemu") }.sorted()
var recordings: [Recording] = []  // padded below
var devices = 0
while devices < deviceCount, !files.isEmpty {
    for f in files where devices < deviceCount {
        guard let r = try? Recording.read(contentsOf: URL(fileURLWithPath: fixtures + "/" + f)) else { continue }
        recordings.append(r)
        devices += r.devices.count
    }
}
// ReplaySource removes a device after its last frame; pad every device with an empty frame at
// the longest recording's end so all of them stay present, and loop with a 1 ms gap.
let end = recordings.flatMap { $0.devices.compactMap { $0.events.last?.time } }.max() ?? 0
for r in recordings.indices {
    for d in recordings[r].devices.indices {
        recordings[r].devices[d].events.append(InputEvent(time: end + 1_000_000, type: EventType.syn, code: SynCode.report, value: 0))
    }
}
let scheduler = SerialDispatchQueueScheduler(label: "evflow.input")
let replay = ReplaySource(recordings: recordings, scheduler: scheduler, speed: 1, loop: true, loopGap: .milliseconds(1))
let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
let hubSubscription = hub.run(replay.devices)
let path = "/tmp/evflow-m1-\(getpid()).sock"
var logger = Logger(label: "M1")
logger.logLevel = .error
let server = StateServer(configuration: StateServerConfiguration(socketPath: path, release: "bench"), hub: hub, logger: logger)
try await server.start()
try await Task.sleep(for: .seconds(1))
let rssNoClients = status("VmRSS")

var pids: [pid_t] = []
for _ in 0..<clientCount {
    var pid: pid_t = 0
    let args = [CommandLine.arguments[0], "--client", path]
    var argv = args.map { strdup($0) } + [nil]
    posix_spawn(&pid, "/proc/self/exe", nil, nil, &argv, environ)
    pids.append(pid)
}
var peak = 0
let stop = Date().addingTimeInterval(seconds)
var samples: [Int] = []
var present: [Int] = []
while Date() < stop {
    try await Task.sleep(for: .milliseconds(500))
    let rss = status("VmRSS")
    samples.append(rss)
    present.append(hub.deviceCount)
    peak = max(peak, rss)
}
let stats = "devices present at the samples: \(present.min() ?? 0)...\(present.max() ?? 0); "
    + "clients \(server.clientCount), dropped \(server.droppedClients); "
    + "RssAnon \(status("RssAnon")) KiB, RssFile \(status("RssFile")) KiB at the end"
let hwm = status("VmHWM")
for pid in pids { kill(pid, SIGTERM) }
await server.shutdown()
hubSubscription.dispose()
for pid in pids { var st: Int32 = 0; waitpid(pid, &st, 0) }

print("| phase | VmRSS KiB |")
print("|---|---|")
print("| process start | \(rssStart) |")
print("| \(devices) devices replaying, server listening, no clients | \(rssNoClients) |")
print("| + \(clientCount) watching clients: last sample | \(samples.last ?? 0) |")
print("| + \(clientCount) watching clients: highest sample over \(Int(seconds)) s | \(peak) |")
print("| VmHWM (peak of the whole run) | \(hwm) |")
print("")
print(stats)
