// L1 (docs/benchmarks.md): latency from injection into a live-mode-like source to each watching
// client's read, over the state server's Unix socket.
//
// A timer thread injects events at RATE Hz (frames of one REL_X event, stamped with
// CLOCK_MONOTONIC just before injection, like a kernel timestamp) → the input side → DeviceHub
// (default filter pipeline) → StateServer on a temporary socket → CLIENTS client threads, each
// a blocking reader that notes CLOCK_MONOTONIC when `recv` returns and subtracts the frame's
// `time`.
//
// The input side, per `--sources` (each a row):
//   loop     the injector writes each event into a pipe; evflow's input thread (InputLoop:
//            epoll) reads it and runs the pipeline on that thread — the live path's shape.
//   poll     the same pipe, read the way evflow did before its one input thread (≤ e20fb7a):
//            a poll thread hands each ready fd to a serial dispatch queue (PollDispatchReader).
//   subject  no fd: the injector calls `onNext` on a PublishSubject itself (the L1 of before).
//
// usage: LatencyBench [--rates 1000,8000] [--seconds 5] [--warmup 1] [--clients 10] [--reps 1]
//                     [--sources loop,poll]
//
// Each rate's evflow rows are followed by a floor row: the same injector and readers with the
// injector writing pre-encoded lines straight into socket pairs (no evflow).
//
// Every evflow row is followed by a `stages` line: the median age of a frame when it entered
// the pipeline (`read`), left the filter (`filtered`) and was written to a client's socket
// (`sent`), from the server's own `LATENCY` answer (warm-up included), beside the clients'
// median. Under the allocation counter (`LD_PRELOAD=<alloc_counter.so>`, see run.sh) the line
// also gives the heap allocations per injected frame during the counted window, all threads.
#if canImport(DeviceStreams)
import DeviceStreams
#endif
import Foundation
import InputDevices
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

enum Source: String { case loop, poll, subject }
let sources = argument("--sources", "loop,poll").split(separator: ",").map { name -> Source in
    guard let source = Source(rawValue: String(name)) else { fatalError("unknown source \(name): loop, poll or subject") }
    return source
}

/// When the clients start counting and stop reading (monotonic ns).
final class Window: Sendable {
    let measureFrom: Int64
    let stopAt: Int64

    init(measureFrom: Int64, stopAt: Int64) {
        self.measureFrom = measureFrom
        self.stopAt = stopAt
    }
}

/// A connected Unix stream socket to `path`, or -1.
func connectUnix(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { p in for (i, b) in path.utf8.enumerated() { p[i] = b } }
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if r != 0 { close(fd); return -1 }
    return fd
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
        fd = connectUnix(path)
        precondition(fd >= 0, "connect failed")
        let req = Array("{\"class\":\"WATCH\"}\n".utf8)
        _ = req.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        samples.reserveCapacity(200_000)
    }

    /// Reads until `stopAt`, parsing `"time":N` out of every FRAME line.
    func run() {
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        var carry: [UInt8] = []
        let key = Array("\"time\":".utf8)
        let framePrefix = Array("{\"class\":\"FRAME\"".utf8)   // made once: the reader allocates nothing per line
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
                guard line.starts(with: framePrefix) else { continue }
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

/// The LD_PRELOAD allocation counter's switch and reader, when the process runs under it.
let allocationCounter: (set: @convention(c) (Int32) -> Void, read: @convention(c) () -> UInt64)? = {
    guard let handle = dlopen(nil, RTLD_NOW),
          let on = dlsym(handle, "evbench_alloc_counting"), let read = dlsym(handle, "evbench_alloc_count")
    else { return nil }
    return (unsafeBitCast(on, to: (@convention(c) (Int32) -> Void).self),
            unsafeBitCast(read, to: (@convention(c) () -> UInt64).self))
}()

/// One `stages` line per evflow row, printed after the table.
nonisolated(unsafe) var stageLines: [String] = []

/// The server's `LATENCY` answer: the `p50` of each total stage, in µs.
func stageMedians(path: String) -> [String: Double] {
    let fd = connectUnix(path)
    guard fd >= 0 else { return [:] }
    defer { close(fd) }
    let request = Array("{\"class\":\"LATENCY\"}\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 1 << 16)
    var tv = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    // The greeting (VERSION) first, then the answer.
    while received.filter({ $0 == UInt8(ascii: "\n") }).count < 2 {
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        received.append(contentsOf: buf[0..<n])
    }
    let lines = received.split(separator: UInt8(ascii: "\n"))
    guard let answer = lines.first(where: { $0.starts(with: Array("{\"class\":\"LATENCY\"".utf8)) }),
          let object = try? JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any],
          let total = object["total"] as? [String: Any]
    else { return [:] }
    var medians: [String: Double] = [:]
    for (stage, summary) in total {
        if let p50 = (summary as? [String: Any])?["p50"] as? NSNumber { medians[stage] = p50.doubleValue / 1000 }
    }
    return medians
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

/// One injected event on the pipe: its stamp and its value.
struct Record {
    var time: Int64
    var value: Int32
    var pad: Int32 = 0
}

/// Reads every whole record the pipe has and emits one frame per record.
func readRecords(_ fd: Int32, into frames: PublishSubject<InputFrame>) {
    var buffer = [Record](repeating: Record(time: 0, value: 0), count: 64)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        for r in buffer[0..<(n / MemoryLayout<Record>.stride)] {
            frames.onNext(InputFrame(time: r.time, events: [InputEvent(time: r.time, type: EventType.rel, code: 0, value: r.value)]))
        }
    }
}

/// The input side as it was before evflow's one input thread (the `ReadinessLoop` of e20fb7a,
/// for one fd): a thread waits in `poll`; a ready fd is disarmed under a lock and its handler
/// is scheduled on the serial dispatch queue, which runs it, re-arms the fd under the lock and
/// wakes the poll thread through a pipe. Kept here as the baseline for the loop row.
final class PollDispatchReader: @unchecked Sendable {
    private let fd: Int32
    private let scheduler: SerialDispatchQueueScheduler
    private let handler: () -> Void
    private let state = Mutex<(armed: Bool, stopped: Bool)>((true, false))
    private let wakeRead: Int32, wakeWrite: Int32

    init(fd: Int32, scheduler: SerialDispatchQueueScheduler, handler: @escaping () -> Void) {
        self.fd = fd
        self.scheduler = scheduler
        self.handler = handler
        var p: [Int32] = [0, 0]
        precondition(pipe(&p) == 0)
        for f in p { _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK) }
        wakeRead = p[0]
        wakeWrite = p[1]
        Thread { [self] in run() }.start()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        wake()
    }

    private func wake() {
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
    }

    private func run() {
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let (armed, stopped) = state.withLock { ($0.armed, $0.stopped) }
            if stopped { break }
            if armed { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 { continue }
            if fds[0].revents != 0 { while read(wakeRead, &drain, drain.count) > 0 {} }
            if fds.count > 1 && fds[1].revents != 0 {
                let ready = state.withLock { s -> Bool in
                    guard s.armed else { return false }
                    s.armed = false
                    return true
                }
                if ready { scheduler.schedule { [self] in fire() } }
            }
        }
        close(wakeRead)
        close(wakeWrite)
    }

    private func fire() {
        guard !state.withLock({ $0.stopped }) else { return }
        handler()
        state.withLock { $0.armed = true }
        wake()
    }
}

func measure(rate: Int, source: Source) async throws -> String {
    let devices = PublishSubject<DeviceStream>()
    let frames = PublishSubject<InputFrame>()
    var loop: InputLoop?
    var queueScheduler: SerialDispatchQueueScheduler?
    let scheduler: SchedulerType
    if source == .loop {
        loop = try InputLoop(name: "l1.input")
        scheduler = loop!
    } else {
        queueScheduler = SerialDispatchQueueScheduler(label: "evflow.input")
        scheduler = queueScheduler!
    }
    /// Runs `work` on the input side's thread and waits.
    func onInput(_ work: @escaping () -> Void) {
        if let loop { loop.sync(work) } else { queueScheduler!.queue.sync(execute: work) }
    }
    let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .monotonic)
    let hubSubscription = hub.run(devices.asObservable())
    var mouse = DeviceInfo(name: "Bench Mouse", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1))
    mouse.classes = [.mouse]
    mouse.capabilities = [EventType.rel: [0, 1]]
    onInput {}   // the hub subscribes on its scheduler
    onInput { devices.onNext(DeviceStream(info: mouse, frames: frames.asObservable())) }

    // The fd sources: a pipe the injector writes records into, read on the input side.
    var p: [Int32] = [-1, -1]
    var token: InputLoop.Token?
    var pollReader: PollDispatchReader?
    if source != .subject {
        precondition(pipe(&p) == 0)
        _ = fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK)
        let fd = p[0]
        if let loop {
            token = loop.sync { loop.register(fd: fd) { readRecords(fd, into: frames); return .drained } }
        } else {
            pollReader = PollDispatchReader(fd: fd, scheduler: queueScheduler!) { readRecords(fd, into: frames) }
        }
    }

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

    // The injector: absolute deadlines every 1/rate s; the stamp is taken right before the
    // event is injected (written to the pipe, or sent into the subject).
    let period = Int64(1e9) / Int64(rate)
    let injectEnd = start + Int64((warmup + seconds) * 1e9)
    let done = DispatchSemaphore(value: 0)
    let writeFD = p[1]
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
            if source == .subject {
                frames.onNext(InputFrame(time: now, events: [InputEvent(time: now, type: EventType.rel, code: 0, value: value)]))
            } else {
                var record = Record(time: now, value: value)
                _ = write(writeFD, &record, MemoryLayout<Record>.stride)
            }
        }
        done.signal()
    }
    // Allocations are counted from the window's start to the injector's end.
    let counting = Thread {
        var ts = timespec(tv_sec: Int(window.measureFrom / 1_000_000_000), tv_nsec: Int(window.measureFrom % 1_000_000_000))
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
        allocationCounter?.set(1)
    }
    counting.start()
    injector.start()
    done.wait()
    let allocations = allocationCounter.map { counter -> UInt64 in
        let n = counter.read()
        counter.set(0)
        return n
    }
    while monotonicNow() < window.stopAt {
        try await Task.sleep(for: .milliseconds(50))
    }
    try await Task.sleep(for: .milliseconds(300))
    let stages = stageMedians(path: path)
    let rss = vmRSSKiB()
    let dropped = server.droppedClients
    await server.shutdown()
    if let loop, let token { loop.sync { loop.unregister(token, fd: p[0]) } }
    pollReader?.stop()
    onInput { hubSubscription.dispose() }
    loop?.shutdown()
    if source != .subject {
        close(p[0])
        close(p[1])
    }

    let all = clients.flatMap { $0.samples }.sorted()
    let expected = Int(Double(rate) * seconds) * clientCount
    func stage(_ name: String) -> String { stages[name].map { String(format: "%.1f", $0) } ?? "–" }
    var stagesLine = "  stages p50 µs: read \(stage("read")), filtered \(stage("filtered")), sent \(stage("sent")), "
        + String(format: "client %.1f", percentile(all, 0.5))
    if let allocations {
        stagesLine += String(format: "; allocations per frame %.2f", Double(allocations) / (Double(rate) * seconds))
    }
    stageLines.append(stagesLine)
    return String(format: "| %5d Hz ", rate) + source.rawValue + String(format: " | %2d | %8d (of ~%d) | %7.1f | %7.1f | %7.1f | %8.1f | %d | %d |",
                  clientCount, all.count, expected, percentile(all, 0.5), percentile(all, 0.99),
                  percentile(all, 0.999), Double(all.last ?? 0) / 1000, dropped, rss)
}

print("| rate | clients | samples | p50 µs | p99 µs | p99.9 µs | max µs | dropped clients | RSS KiB |")
print("|---|---|---|---|---|---|---|---|---|")
// Interleaved: each source's evflow row, then the floor, per rate, `--reps` times.
let reps = Int(argument("--reps", "1"))!
for _ in 0..<reps {
    for rate in rates {
        for source in sources { print(try await measure(rate: rate, source: source)) }
        print(try await measureFloor(rate: rate))
    }
}
print()
for line in stageLines { print(line) }
