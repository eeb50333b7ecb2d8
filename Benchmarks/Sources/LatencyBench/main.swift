// L1 (docs/benchmarks.md): latency from injection into a live-mode-like source to each watching
// client's read, over the state server's Unix socket.
//
// A timer thread feeds a PublishSubject at RATE Hz (frames of one REL_X event, stamped with
// CLOCK_MONOTONIC just before `onNext`, like a kernel timestamp) → DeviceHub (default filter
// pipeline) → StateServer on a temporary socket → CLIENTS client threads, each a blocking
// reader that notes CLOCK_MONOTONIC when `recv` returns and subtracts the frame's `time`.
//
// usage: LatencyBench [--rates 1000,8000] [--seconds 5] [--warmup 1] [--clients 10] [--reps 1]
//
// Each evflow row is followed by a floor row: the same injector and readers with the
// injector writing pre-encoded lines straight into socket pairs (no evflow).
import Foundation
import InputModel
import Logging
import Pipeline
import Reactive
import StateServer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

func argument(_ name: String, _ fallback: String) -> String {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: name), i + 1 < args.count { return args[i + 1] }
    return fallback
}

let rates = argument("--rates", "1000,8000").split(separator: ",").compactMap { Int($0) }
let seconds = Double(argument("--seconds", "5"))!
let warmup = Double(argument("--warmup", "1"))!
let clientCount = Int(argument("--clients", "10"))!

/// When the clients start counting and stop reading (monotonic ns).
final class Window: Sendable {
    let measureFrom: Int64
    let stopAt: Int64

    init(measureFrom: Int64, stopAt: Int64) {
        self.measureFrom = measureFrom
        self.stopAt = stopAt
    }
}

/// A blocking reader of one client connection; collects latencies after `measureFrom`.
final class LatencyClient: @unchecked Sendable {
    let fd: Int32
    var samples: [Int64] = []
    let window: Window

    /// Floor mode: one end of a socket pair the injector writes to directly.
    init(fd: Int32, window: Window) {
        self.window = window
        self.fd = fd
        samples.reserveCapacity(200_000)
    }

    init(path: String, window: Window) {
        self.window = window
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        precondition(r == 0, "connect failed")
        let req = Array("{\"class\":\"WATCH\"}\n".utf8)
        _ = req.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        samples.reserveCapacity(200_000)
    }

    /// Reads until `stopAt`, parsing `"time":N` out of every FRAME line.
    func run() {
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        var carry: [UInt8] = []
        let key = Array("\"time\":".utf8)
        var tv = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        while monotonicNow() < window.stopAt {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let readAt = monotonicNow()
            if n <= 0 { continue }
            carry.append(contentsOf: buf[0..<n])
            var lineStart = 0
            let from = window.measureFrom
            while let nl = carry[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = carry[lineStart..<nl]
                lineStart = nl + 1
                guard line.starts(with: Array("{\"class\":\"FRAME\"".utf8)) else { continue }
                // Find "time": and parse the integer after it.
                var i = line.startIndex
                var found = false
                while i + key.count <= line.endIndex {
                    if line[i] == key[0] && line[i..<(i + key.count)].elementsEqual(key) { found = true; break }
                    i += 1
                }
                guard found else { continue }
                var t: Int64 = 0
                var j = i + key.count
                while j < line.endIndex, line[j] >= 48, line[j] <= 57 { t = t * 10 + Int64(line[j] - 48); j += 1 }
                if t >= from { samples.append(readAt - t) }
            }
            carry.removeSubrange(0..<lineStart)
        }
        close(fd)
    }
}

func percentile(_ sorted: [Int64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let i = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return Double(sorted[max(i, 0)]) / 1000
}

func vmRSSKiB() -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

/// The floor: the same injector and readers, but the injector writes a pre-encoded FRAME line
/// with the stamp straight into 10 socket pairs — no evflow at all. What this row shows is the
/// machine's own scheduling and socket latency.
func measureFloor(rate: Int) async throws -> String {
    let start = monotonicNow()
    let window = Window(measureFrom: start + Int64(warmup * 1e9), stopAt: start + Int64((warmup + seconds + 0.5) * 1e9))
    var writers: [Int32] = []
    var clients: [LatencyClient] = []
    for _ in 0..<clientCount {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        writers.append(pair[0])
        clients.append(LatencyClient(fd: pair[1], window: window))
    }
    let threads = clients.map { c in Thread { c.run() } }
    for t in threads { t.start() }
    let period = Int64(1e9) / Int64(rate)
    let injectEnd = start + Int64((warmup + seconds) * 1e9)
    let done = DispatchSemaphore(value: 0)
    let fds = writers
    let injector = Thread {
        var next = monotonicNow()
        let head = Array("{\"class\":\"FRAME\",\"device\":\"0003:0001:0002-00000000\",\"time\":".utf8)
        let tail = Array(",\"stream\":\"filtered\",\"events\":[{\"type\":\"EV_REL\",\"code\":\"REL_X\",\"value\":1}]}\n".utf8)
        var line: [UInt8] = []
        while true {
            next += period
            var ts = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
            let now = monotonicNow()
            if now >= injectEnd { break }
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: head)
            line.append(contentsOf: Array(String(now).utf8))
            line.append(contentsOf: tail)
            for fd in fds { _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
        }
        done.signal()
    }
    injector.start()
    done.wait()
    while monotonicNow() < window.stopAt { try await Task.sleep(for: .milliseconds(50)) }
    try await Task.sleep(for: .milliseconds(300))
    for fd in writers { close(fd) }
    let all = clients.flatMap { $0.samples }.sorted()
    let expected = Int(Double(rate) * seconds) * clientCount
    return String(format: "| %5d Hz floor | %2d | %8d (of ~%d) | %7.1f | %7.1f | %7.1f | %8.1f | – | – |",
                  rate, clientCount, all.count, expected, percentile(all, 0.5), percentile(all, 0.99),
                  percentile(all, 0.999), Double(all.last ?? 0) / 1000)
}

func measure(rate: Int) async throws -> String {
    let devices = PublishSubject<DeviceStream>()
    let frames = PublishSubject<InputFrame>()
    let scheduler = SerialDispatchQueueScheduler(label: "evflow.input")
    let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler)
    let hubSubscription = hub.run(devices.asObservable())
    var mouse = DeviceInfo(name: "Bench Mouse", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1))
    mouse.classes = [.mouse]
    mouse.capabilities = [EventType.rel: [0, 1]]
    scheduler.queue.sync {}   // the hub subscribes on its scheduler
    scheduler.queue.sync { devices.onNext(DeviceStream(info: mouse, frames: frames.asObservable())) }

    let path = "/tmp/evflow-l1-\(getpid()).sock"
    var logger = Logger(label: "L1")
    logger.logLevel = .error
    let server = StateServer(configuration: StateServerConfiguration(socketPath: path, release: "bench"), hub: hub, logger: logger)
    try await server.start()

    let start = monotonicNow()
    let window = Window(measureFrom: start + Int64(warmup * 1e9), stopAt: start + Int64((warmup + seconds + 0.5) * 1e9))
    let clients = (0..<clientCount).map { _ in LatencyClient(path: path, window: window) }
    let threads = clients.map { c in Thread { c.run() } }
    for t in threads { t.start() }
    try await Task.sleep(for: .milliseconds(300))   // every WATCH answered

    // The injector: absolute deadlines every 1/rate s; the stamp is taken right before onNext.
    let period = Int64(1e9) / Int64(rate)
    let injectEnd = start + Int64((warmup + seconds) * 1e9)
    let injected = Atomic<Int>(0)
    let done = DispatchSemaphore(value: 0)
    let injector = Thread {
        var next = monotonicNow()
        var value: Int32 = 1
        while true {
            next += period
            var ts = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
            let now = monotonicNow()
            if now >= injectEnd { break }
            value = -value
            frames.onNext(InputFrame(time: now, events: [InputEvent(time: now, type: EventType.rel, code: 0, value: value)]))
            injected.add(1, ordering: .relaxed)
        }
        done.signal()
    }
    injector.start()
    done.wait()
    while monotonicNow() < window.stopAt {
        try await Task.sleep(for: .milliseconds(50))
    }
    try await Task.sleep(for: .milliseconds(300))
    let rss = vmRSSKiB()
    let dropped = server.droppedClients
    await server.shutdown()
    hubSubscription.dispose()

    let all = clients.flatMap { $0.samples }.sorted()
    let expected = Int(Double(rate) * seconds) * clientCount
    return String(format: "| %5d Hz | %2d | %8d (of ~%d) | %7.1f | %7.1f | %7.1f | %8.1f | %d | %d |",
                  rate, clientCount, all.count, expected, percentile(all, 0.5), percentile(all, 0.99),
                  percentile(all, 0.999), Double(all.last ?? 0) / 1000, dropped, rss)
}

print("| rate | clients | samples | p50 µs | p99 µs | p99.9 µs | max µs | dropped clients | RSS KiB |")
print("|---|---|---|---|---|---|---|---|---|")
// Interleaved: evflow, then the floor, per rate, `--reps` times.
let reps = Int(argument("--reps", "1"))!
for _ in 0..<reps {
    for rate in rates {
        print(try await measure(rate: rate))
        print(try await measureFloor(rate: rate))
    }
}
