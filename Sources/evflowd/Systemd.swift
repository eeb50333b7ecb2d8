import CSystemd
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed libsystemd call: the function's name and the errno it returned (negated, as libsystemd does).
struct SystemdError: Error, CustomStringConvertible, Equatable {
    /// The libsystemd function that failed, e.g. `sd_notify`.
    var call: String
    /// The positive errno value.
    var errno: Int32

    var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Talks to the service manager: readiness, status, watchdog and stop notifications over
/// `sd_notify`, the watchdog interval, and sockets passed by socket activation.
///
/// Every notification is a no-op (returns `.notConfigured`) when the process was not started by
/// systemd with `NOTIFY_SOCKET` set, so evflowd can run the same code from a terminal.
/// The environment is never unset here: `NOTIFY_SOCKET` must stay for WATCHDOG=1 and STATUS=
/// for the whole life of the process.
struct SystemdNotifier: Sendable {
    /// Whether a notification was delivered.
    enum Outcome: Equatable, Sendable {
        /// The service manager received the message.
        case sent
        /// `NOTIFY_SOCKET` is not set: not running under systemd (or `NotifyAccess=none`).
        case notConfigured
    }

    /// Creates a notifier. It holds no state: libsystemd reads `NOTIFY_SOCKET` on every call.
    init() {}

    /// Whether `NOTIFY_SOCKET` is set, i.e. notifications will go somewhere.
    var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends raw `KEY=value` assignments, one per element (newline-separated on the wire).
    @discardableResult
    func notify(_ assignments: [String]) throws(SystemdError) -> Outcome {
        let message = assignments.joined(separator: "\n")
        let rc = sd_notify(0, message)
        if rc < 0 { throw SystemdError(call: "sd_notify", errno: -rc) }
        return rc == 0 ? .notConfigured : .sent
    }

    /// `READY=1`: devices are enumerated and the socket listens. An optional status goes with it.
    @discardableResult
    func ready(status: String? = nil) throws(SystemdError) -> Outcome {
        try notify(["READY=1"] + (status.map { [Self.statusAssignment($0)] } ?? []))
    }

    /// `STATUS=...`: one line shown by `systemctl status` (e.g. "3 devices, 1 client").
    @discardableResult
    func status(_ text: String) throws(SystemdError) -> Outcome {
        try notify([Self.statusAssignment(text)])
    }

    /// `WATCHDOG=1`: the keep-alive ping; send it every `watchdogPingInterval`.
    @discardableResult
    func watchdog() throws(SystemdError) -> Outcome {
        try notify(["WATCHDOG=1"])
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (required by `Type=notify-reload`, accepted by
    /// older managers): a configuration reload (SIGHUP) has started. Send `ready()` when done.
    @discardableResult
    func reloading() throws(SystemdError) -> Outcome {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        return try notify(["RELOADING=1", "MONOTONIC_USEC=\(usec)"])
    }

    /// `STOPPING=1`: shutdown has begun (SIGTERM received).
    @discardableResult
    func stopping() throws(SystemdError) -> Outcome {
        try notify(["STOPPING=1"])
    }

    /// `STATUS=` with the text on one line: a newline would start a new assignment and let the
    /// text inject e.g. `READY=1`, so control characters become spaces.
    static func statusAssignment(_ text: String) -> String {
        "STATUS=" + String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7f ? " " : $0
        }))
    }

    /// The watchdog timeout (`WatchdogSec=`) when the manager expects pings from this process,
    /// nil when the watchdog is off or meant for another process (`WATCHDOG_PID`).
    static func watchdogTimeout() throws(SystemdError) -> Duration? {
        var usec: UInt64 = 0
        let rc = sd_watchdog_enabled(0, &usec)
        if rc < 0 { throw SystemdError(call: "sd_watchdog_enabled", errno: -rc) }
        return rc == 0 ? nil : .microseconds(Int64(clamping: usec))
    }

    /// How often to send `WATCHDOG=1`: half the timeout, as sd_watchdog_enabled(3) recommends,
    /// so one late ping does not get the service killed.
    static func watchdogPingInterval() throws(SystemdError) -> Duration? {
        try watchdogTimeout().map { $0 / 2 }
    }

    /// File descriptors passed by socket activation (`LISTEN_FDS`, starting at
    /// `SD_LISTEN_FDS_START`), already close-on-exec. The environment variables are unset so a
    /// child process does not believe they are meant for it. Empty when not socket-activated.
    static func listenFDs() throws(SystemdError) -> [Int32] {
        let count = sd_listen_fds(1)
        if count < 0 { throw SystemdError(call: "sd_listen_fds", errno: -count) }
        let first = Int32(SD_LISTEN_FDS_START)
        return (0..<count).map { first + $0 }
    }

    /// Whether `fd` is a listening Unix stream socket (optionally bound to `path`), i.e. one
    /// the state server can accept on. Guards against an `evflowd.socket` edited to something else.
    static func isListeningUnixStreamSocket(_ fd: Int32, path: String? = nil) throws(SystemdError) -> Bool {
        let rc: Int32
        if let path {
            rc = path.withCString { sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, $0, 0) }
        } else {
            rc = sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0)
        }
        if rc < 0 { throw SystemdError(call: "sd_is_socket_unix", errno: -rc) }
        return rc > 0
    }
}
