import DeviceStreams
import Foundation
import InputModel
import Logging
import NIOCore
import Pipeline
import Reactive
import Recording
import Synchronization
import Testing
@testable import EvflowProtocol
@testable import StateServer
#if canImport(Glibc)
import Glibc
#endif

/// Test fixtures, found from this source file's location.
enum ServerFixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func evemu(_ path: String) throws -> Recording {
        try Recording.read(contentsOf: root.appendingPathComponent("recordings/evemu-devices/" + path))
    }

    static var keyboard: Recording {
        get throws { try evemu("misc/Microsoft Surface Type Cover.events") }
    }
    static var mouse: Recording { get throws { try evemu("mice/Ultrathin Touch Mouse.events") } }
}

private let socketCounter = Atomic<Int>(0)

/// A unique, short socket path (sun_path holds 107 bytes).
func temporarySocketPath() -> String {
    "/tmp/srv-\(getpid())-\(socketCounter.add(1, ordering: .relaxed).newValue).sock"
}

/// Devices fed from the test: a `DeviceHub` over subjects the test drives (synchronously,
/// on the test's thread, with a virtual clock for the filters).
final class ManualDevices: @unchecked Sendable {
    let scheduler = VirtualTimeScheduler()
    let devices = PublishSubject<DeviceStream>()
    private(set) var streams: [DeviceID: PublishSubject<InputFrame>] = [:]
    let hub: DeviceHub
    private var subscription: Disposable?

    init(config: FilterConfig = FilterConfig()) {
        hub = DeviceHub(store: StateStore(), config: config, scheduler: scheduler, latencyClock: .replay)
        subscription = hub.run(devices.asObservable())
        scheduler.advance(by: .zero)   // the hub subscribes on its scheduler
    }

    func add(_ info: DeviceInfo, output: (any DeviceOutputPort)? = nil) {
        let frames = PublishSubject<InputFrame>()
        streams[info.id] = frames
        devices.onNext(DeviceStream(info: info, frames: frames.asObservable(), output: output))
    }

    func inaccessible(_ info: DeviceInfo, reason: String) {
        let ended = PublishSubject<InputFrame>()
        streams[info.id] = ended
        devices.onNext(DeviceStream(info: info, access: .inaccessible(reason: reason), frames: ended.asObservable()))
    }

    func remove(_ info: DeviceInfo) {
        streams[info.id]?.onCompleted()
        streams[info.id] = nil
    }

    func send(_ id: DeviceID, _ frame: InputFrame) {
        streams[id]?.onNext(frame)
    }

    func stop() {
        subscription?.dispose()
        subscription = nil
        scheduler.advance(by: .zero)   // the hub is disposed on its scheduler
    }
}

/// A hub that replays fixtures on a virtual clock advanced by the test.
final class ReplayDevices: @unchecked Sendable {
    let scheduler = VirtualTimeScheduler()
    let replay: ReplaySource
    let hub: DeviceHub
    private var subscription: Disposable?

    init(_ recordings: [Recording]) {
        replay = ReplaySource(recordings: recordings, scheduler: scheduler)
        hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        let replay = self.replay
        subscription = hub.run(replay.devices)
        scheduler.advance(by: .zero)   // devices are added at time 0
    }

    func advance(to t: Int64) { scheduler.advance(to: t) }

    /// Ends the replay; the replay stops (and releases its timer) on its scheduler, so run it.
    func stop() {
        subscription?.dispose()
        subscription = nil
        scheduler.advance(by: .zero)
    }
}

let testLogger: Logger = {
    var l = Logger(label: "StateServerTests")
    l.logLevel = .critical
    return l
}()

/// A started server on a temporary socket; its idle limits and slow-consumer grace run on
/// `timers` (the event loop's unless a test passes `ManualServerTimers`).
func startServer(hub: DeviceHub, trustRootAndSelf: Bool = true, timers: any ServerTimers = EventLoopTimers(),
                 _ configure: (inout StateServerConfiguration) -> Void = { _ in }) async throws -> (StateServer, String) {
    let path = temporarySocketPath()
    var config = StateServerConfiguration(socketPath: path, release: "test")
    configure(&config)
    let server = StateServer(configuration: config, hub: hub, logger: testLogger, trustRootAndSelf: trustRootAndSelf,
                             timers: timers)
    try await server.start()
    return (server, path)
}

struct TestClientError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking client over a plain POSIX socket, reading JSON lines with a timeout.
final class TestClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var eof = false

    init(path: String, receiveBuffer: Int? = nil) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestClientError(description: "socket: \(errno)") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in
            for (i, b) in path.utf8.enumerated() { p[i] = b }
        }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let e = errno
            Glibc.close(fd)
            throw TestClientError(description: "connect \(path): \(String(cString: strerror(e)))")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ line: String) throws {
        try sendRaw(Array((line + "\n").utf8))
    }

    func sendRaw(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestClientError(description: "send: \(errno)") }
            off += n
        }
    }

    /// Whether a byte (or EOF) is waiting to be read now; does not wait.
    var hasInput: Bool {
        if !buffer.isEmpty || eof { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) > 0
    }

    /// Closes the write side and the read side.
    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// The next line, or nil at EOF; throws on timeout.
    func readLine(timeout: Double = 5) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            if eof { return nil }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestClientError(description: "timed out waiting for a line") }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(remaining * 1000) + 1)
            if r <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }   // a signal is not EOF
            if n <= 0 { eof = true } else { buffer.append(contentsOf: chunk[0..<n]) }
        }
    }

    /// The next message as an object; throws at EOF or timeout.
    func read(timeout: Double = 5) throws -> [String: Any] {
        guard let line = try readLine(timeout: timeout) else { throw TestClientError(description: "EOF") }
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw TestClientError(description: "not an object: \(line)")
        }
        return object
    }

    /// Sends a request and returns the next message.
    func request(_ line: String) throws -> [String: Any] {
        try send(line)
        return try read()
    }

    /// Reads until a message of class `cls` (returns it) — skipping others, collected in `skipped`.
    func read(until cls: String, skipped: inout [[String: Any]], timeout: Double = 5) throws -> [String: Any] {
        while true {
            let m = try read(timeout: timeout)
            if m["class"] as? String == cls { return m }
            skipped.append(m)
        }
    }

    /// Whether the server has closed: reads (and drops) everything up to EOF.
    func drainToEOF(timeout: Double = 5) throws -> [String] {
        var lines: [String] = []
        while let l = try readLine(timeout: timeout) { lines.append(l) }
        return lines
    }
}

/// Sends a key press and release on `id` early in virtual time and lets the window close, so
/// the device's filter has created its timer slot before a test takes a baseline.
func warmUp(_ devices: ManualDevices, _ id: DeviceID, code: UInt16 = 31) {
    devices.send(id, keyFrame(code, 1, ms: 0))
    devices.send(id, keyFrame(code, 0, ms: 5))
    devices.scheduler.advance(to: 500_000_000)
}

/// Polls `condition` until true or `timeout` passes.
func eventually(timeout: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A frame of one key event at `ms` milliseconds.
func keyFrame(_ code: UInt16, _ value: Int32, ms: Int64) -> InputFrame {
    let t = ms * 1_000_000
    return InputFrame(time: t, events: [InputEvent(time: t, type: EventType.key, code: code, value: value)])
}

/// A frame of relative motion at `ms`.
func motionFrame(dx: Int32, ms: Int64) -> InputFrame {
    let t = ms * 1_000_000
    return InputFrame(time: t, events: [InputEvent(time: t, type: EventType.rel, code: 0, value: dx)])
}

/// A keyboard-like device.
func testKeyboard(_ name: String = "Test Keyboard", product: UInt16 = 1) -> DeviceInfo {
    var info = DeviceInfo(name: name, inputID: InputID(bustype: 3, vendor: 0x1234, product: product, version: 1))
    info.classes = [.keyboard, .key]
    info.capabilities = [EventType.key: [30, 31, 42], EventType.led: [0, 1]]
    return info
}

/// A mouse-like device.
func testMouse(_ name: String = "Test Mouse") -> DeviceInfo {
    var info = DeviceInfo(name: name, inputID: InputID(bustype: 3, vendor: 0x1234, product: 0x99, version: 1))
    info.classes = [.mouse]
    info.capabilities = [EventType.rel: [0, 1], EventType.key: [0x110]]
    return info
}

/// The server's timers on a clock the test moves (`advance(by:)`): a timer runs only once the
/// test has moved the clock to its deadline, however fast or slow the host is, so a test of a
/// time limit checks both sides of it — not closed just before, closed at — without margins.
final class ManualServerTimers: ServerTimers {
    private final class Entry: Sendable {
        let deadline: Int64
        let loop: any EventLoop
        let task: @Sendable () -> Void
        let cancelled = Atomic<Bool>(false)

        init(deadline: Int64, loop: any EventLoop, task: @escaping @Sendable () -> Void) {
            self.deadline = deadline
            self.loop = loop
            self.task = task
        }
    }

    private let state = Mutex<(now: Int64, entries: [Entry])>((0, []))

    func schedule(in delay: TimeAmount, on loop: EventLoop, _ task: @escaping @Sendable () -> Void) -> ServerTimer {
        let entry = state.withLock { s in
            let (deadline, overflow) = s.now.addingReportingOverflow(delay.nanoseconds)
            let e = Entry(deadline: overflow ? .max : deadline, loop: loop, task: task)
            s.entries.append(e)
            return e
        }
        return ServerTimer { entry.cancelled.store(true, ordering: .relaxed) }
    }

    /// Timers scheduled and neither run nor cancelled.
    var armed: Int { state.withLock { $0.entries.filter { !$0.cancelled.load(ordering: .relaxed) }.count } }

    /// Moves the clock by `delay` once `server`'s event loop has finished what it was doing (a
    /// reply the test has read is followed, in the same job, by the re-arming of the idle
    /// limit); returns once every timer now due has run (in deadline order, each on its event
    /// loop, unless cancelled there first) — a `CLOSE` it wrote is then in the client's socket.
    func advance(by delay: TimeAmount, after server: StateServer) async throws {
        try await server.roundTrip()
        let due = state.withLock { s -> [Entry] in
            s.now += delay.nanoseconds
            let now = s.now
            let due = s.entries.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            s.entries.removeAll { $0.deadline <= now }
            return due
        }
        for entry in due {
            try await entry.loop.submit { if !entry.cancelled.load(ordering: .relaxed) { entry.task() } }.get()
        }
    }
}
