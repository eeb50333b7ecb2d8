import Dispatch
import DeviceIO
import InputDevices
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// PASS/FAIL bookkeeping: one line per check, a summary line at the end.
final class Report: @unchecked Sendable {
    private(set) var passed = 0
    private(set) var failed = 0

    func check(_ ok: Bool, _ name: String, _ detail: @autoclosure () -> String = "") {
        let d = detail()
        if ok {
            passed += 1
            say("PASS \(name)" + (d.isEmpty ? "" : " (\(d))"))
        } else {
            failed += 1
            say("FAIL \(name)" + (d.isEmpty ? "" : ": \(d)"))
        }
    }
}

func say(_ text: String) {
    print(text)
    fflush(nil)
}

/// Seconds since `start` (monotonic), formatted.
func seconds(since start: Int64) -> String {
    let ms = (monotonicNow() - start) / 1_000_000
    return "\(ms / 1000).\(String(ms % 1000 / 100))s"
}

/// Waits (checking every 20 ms: the guest is emulated, polling must stay cheap) until `condition` holds or `timeout` seconds pass.
@discardableResult
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicNow() + Int64(timeout * 1e9)
    while !condition() {
        if monotonicNow() > deadline { return condition() }
        usleep(20_000)
    }
    return true
}

/// A child process (the uinput device helper, udevadm), output to a log file.
final class Child {
    let pid: pid_t
    let name: String
    let log: String

    init(_ argv: [String], name: String, log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArgs = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, environ)
        guard rc == 0 else { throw SystemError(call: "posix_spawnp(\(argv[0]))", errno: rc) }
        self.pid = pid
        self.name = name
        self.log = log
    }

    /// Starts `scripts/vm/uinput-device.py KIND ARGS...`.
    static func device(_ kind: String, _ args: [String], name: String) throws -> Child {
        try Child(["python3", "scripts/vm/uinput-device.py", kind, "--name", name] + args,
                  name: name, log: "\(scratch)/\(name.replacingSpaces()).log")
    }

    /// Waits for the exit; returns the exit status (128+signal when killed).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// The log's last lines (for a failure message).
    func logTail() -> String {
        guard let f = fopen(log, "r") else { return "" }
        defer { fclose(f) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 1024)
        while fgets(&buffer, 1024, f) != nil {
            lines.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.trimmingNewline())
        }
        return lines.suffix(4).joined(separator: " | ")
    }
}

/// Runs a command to completion; returns its exit status.
@discardableResult
func run(_ argv: [String]) -> Int32 {
    guard let child = try? Child(argv, name: argv[0], log: "\(scratch)/\(argv[0]).log") else { return 127 }
    return child.wait()
}

/// What the process's descriptors point at (`/proc/self/fd/N` → target), for leak reports.
func openFileDescriptorTargets() -> String {
    guard let dir = opendir("/proc/self/fd") else { return "" }
    defer { closedir(dir) }
    var result: [String] = []
    while let e = readdir(dir) {
        let n = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard Int(n) != nil else { continue }
        var buffer = [CChar](repeating: 0, count: 256)
        let len = readlink("/proc/self/fd/\(n)", &buffer, 255)
        result.append("\(n)→" + (len > 0 ? String(decoding: buffer[..<len].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"))
    }
    return result.joined(separator: " ")
}

/// Scratch directory for handshake files and logs.
let scratch = "/tmp/evflow-e2e"

/// Creates the handshake file `path` (what `@FILE` in a device script waits for).
func touch(_ path: String) {
    let fd = open(path, O_WRONLY | O_CREAT, 0o644)
    if fd >= 0 { close(fd) }
}

func readFile(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var buffer = [CChar](repeating: 0, count: 256)
    guard fgets(&buffer, 256, f) != nil else { return nil }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.trimmingNewline()
}

extension String {
    func replacingSpaces() -> String { String(map { $0 == " " ? "-" : $0 }) }
    func trimmingNewline() -> String {
        var s = self
        while s.last == "\n" || s.last == "\r" { s.removeLast() }
        return s
    }
}

/// What the suite saw: every device change and, for the suite's own devices (names starting
/// with "evflow e2e"), every frame, collected on the input loop.
final class Recorder: @unchecked Sendable {
    struct DeviceLog {
        var frames: [InputFrame] = []
        var completed = false
        var receivedAt: [Int64] = []
    }

    private struct State {
        var changes: [(change: DeviceChange, at: Int64)] = []
        /// One log per device stream of the suite, in order; the same node and name come
        /// back in every hot-plug cycle.
        var logs: [(key: String, log: DeviceLog)] = []
        var kindCounts: [String: Int] = [:]   // "kind|name" → count
    }

    private let state = Mutex(State())

    static func key(_ info: DeviceInfo) -> String { "\(info.devnode ?? "?")|\(info.name)" }

    func record(_ change: DeviceChange) {
        let now = monotonicNow()
        state.withLock {
            $0.changes.append((change, now))
            $0.kindCounts["\(change.kind)|\(change.device.name)", default: 0] += 1
        }
    }

    /// Starts the log of a new device stream; returns its index.
    func startLog(_ info: DeviceInfo) -> Int {
        state.withLock {
            $0.logs.append((Self.key(info), DeviceLog()))
            return $0.logs.count - 1
        }
    }

    func frame(_ frame: InputFrame, log index: Int) {
        let now = monotonicNow()
        state.withLock {
            $0.logs[index].log.frames.append(frame)
            $0.logs[index].log.receivedAt.append(now)
        }
    }

    func completed(log index: Int) {
        state.withLock { $0.logs[index].log.completed = true }
    }

    /// How many changes of `kind` the device called `name` had (cheap: no copying).
    func count(_ kind: String, _ name: String) -> Int {
        state.withLock { $0.kindCounts["\(kind)|\(name)"] ?? 0 }
    }

    var changes: [(change: DeviceChange, at: Int64)] { state.withLock { $0.changes } }

    func changes(named name: String) -> [(change: DeviceChange, at: Int64)] {
        changes.filter { $0.change.device.name == name }
    }

    func changes(prefix: String) -> [(change: DeviceChange, at: Int64)] {
        changes.filter { $0.change.device.name.hasPrefix(prefix) }
    }

    /// The latest subscription's log for the device.
    func log(of info: DeviceInfo) -> DeviceLog {
        state.withLock { s in s.logs.last { $0.key == Self.key(info) }?.log ?? DeviceLog() }
    }

    /// Every subscription's log for devices whose name starts with `prefix`.
    func logs(prefix: String) -> [DeviceLog] {
        state.withLock { s in s.logs.filter { $0.key.split(separator: "|").last.map { $0.hasPrefix(prefix) } ?? false }.map(\.log) }
    }
}

extension DeviceChange {
    var kind: String {
        switch self {
        case .added: return "added"
        case .removed: return "removed"
        case .inaccessible: return "inaccessible"
        }
    }
}

/// `KEY_A=1` style text of a frame's events.
func describe(_ frames: [InputFrame]) -> String {
    frames.map { f in
        f.events.map { "\(EventNames.codeName(type: $0.type, code: $0.code) ?? "\($0.type):\($0.code)")=\($0.value)" }
            .joined(separator: " ")
    }.joined(separator: " . ")
}

/// On a crash, print the raw stack to stderr (the static binary has no Swift backtracer in
/// the guest); `scripts/e2e` output can then be symbolised on the host with
/// `llvm-symbolizer --obj .build-e2e/debug/evflow-e2e`.
func installCrashReporter() {
    for sig in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT] {
        signal(sig) { sig in
            let message = "evflow-e2e: fatal signal \(sig); stack (return addresses):\n"
            message.withCString { _ = write(2, $0, strlen($0)) }
            // <execinfo.h> is not in Swift's Glibc module: look the two functions up.
            typealias Backtrace = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>, Int32) -> Int32
            typealias Symbols = @convention(c) (UnsafePointer<UnsafeMutableRawPointer?>, Int32, Int32) -> Void
            if let b = dlsym(nil, "backtrace"), let p = dlsym(nil, "backtrace_symbols_fd") {
                var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
                let n = unsafeBitCast(b, to: Backtrace.self)(&frames, 64)
                unsafeBitCast(p, to: Symbols.self)(&frames, n, 2)
            }
            signal(sig, SIG_DFL)
            raise(sig)
        }
    }
}
