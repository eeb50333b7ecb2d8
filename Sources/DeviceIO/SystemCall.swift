#if canImport(Glibc)
import Glibc
#endif

/// A failed system or library call: its name and `errno`.
///
/// Every syscall in this module goes through `SystemCall` so EINTR is retried in one place,
/// EAGAIN becomes "would block" instead of an error, and every error names the call that failed.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `open(/dev/input/event3)`.
    public var call: String
    /// The `errno` value.
    public var errno: Int32

    /// Creates an error.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// Whether this is a permission failure that may go away once udev sets the node's mode.
    public var isPermissionDenied: Bool { errno == EACCES || errno == EPERM }

    /// Whether the device is gone.
    public var isNoDevice: Bool { errno == ENODEV }

    /// `open(/dev/input/event3): Permission denied (errno 13)`.
    public var description: String {
        "\(call): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The outcome of a non-blocking call that may have nothing to do yet.
public enum IOResult<Value: Sendable>: Sendable {
    /// The call did its work.
    case done(Value)
    /// The call would have blocked (EAGAIN / EWOULDBLOCK).
    case wouldBlock
}

extension IOResult: Equatable where Value: Equatable {}

/// The errno funnel: wraps calls that return -1 and set `errno` (libc style) or return a
/// negative errno (libevdev / libudev style).
public enum SystemCall {
    /// Runs a libc-style call: retries EINTR, maps EAGAIN to `.wouldBlock`, throws the rest.
    public static func run<Value: BinaryInteger & Sendable>(
        _ name: @autoclosure () -> String, _ body: () -> Value
    ) throws(SystemError) -> IOResult<Value> {
        while true {
            let result = body()
            if result != -1 { return .done(result) }
            let code = Glibc.errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SystemError(call: name(), errno: code)
        }
    }

    /// Runs a libc-style call that must not block (a blocking answer is an error here).
    public static func runBlocking<Value: BinaryInteger & Sendable>(
        _ name: @autoclosure () -> String, _ body: () -> Value
    ) throws(SystemError) -> Value {
        switch try run(name(), body) {
        case .done(let value): return value
        case .wouldBlock: throw SystemError(call: name(), errno: EAGAIN)
        }
    }

    /// Runs a call that returns `-errno` on failure (libevdev, libudev): retries -EINTR, maps
    /// -EAGAIN to `.wouldBlock`, throws the rest. Non-negative results are passed through.
    public static func runNegativeErrno(
        _ name: @autoclosure () -> String, _ body: () -> Int32
    ) throws(SystemError) -> IOResult<Int32> {
        while true {
            let result = body()
            if result >= 0 { return .done(result) }
            let code = -result
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SystemError(call: name(), errno: code)
        }
    }
}

/// An owned file descriptor: closed on purpose with `close()`, never implicitly.
///
/// `deinit` checks that `close()` was called, so a leaked fd is a crash in debug builds
/// rather than a slowly growing `/proc/self/fd`.
public final class FileDescriptor: @unchecked Sendable {
    /// The raw descriptor; -1 once closed.
    public private(set) var rawValue: Int32

    /// Takes ownership of `rawValue`.
    public init(owning rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Opens `path` read-only, non-blocking, close-on-exec.
    public static func openForReading(_ path: String) throws(SystemError) -> FileDescriptor {
        let fd = try SystemCall.runBlocking("open(\(path))") {
            Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        }
        return FileDescriptor(owning: fd)
    }

    /// Whether `close()` has been called.
    public var isClosed: Bool { rawValue < 0 }

    /// Closes the descriptor once. EINTR is not retried: on Linux the fd is gone either way.
    public func close() {
        guard rawValue >= 0 else { return }
        let fd = rawValue
        rawValue = -1
        _ = Glibc.close(fd)
    }

    deinit {
        precondition(rawValue < 0, "FileDescriptor \(rawValue) deallocated without close()")
    }
}

/// The number of open file descriptors of this process (entries of `/proc/self/fd`, minus
/// the one used to list them); nil where `/proc` is not mounted.
public func openFileDescriptorCount() -> Int? {
    guard let dir = opendir("/proc/self/fd") else { return nil }
    defer { closedir(dir) }
    var count = 0
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { count += 1 }
    }
    return count - 1
}
