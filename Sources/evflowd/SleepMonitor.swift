import CSystemd
import InputDevices
import Logging
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// Follows logind's suspend and resume over the system bus (sd-bus), so the virtual twins
/// release their keys before the machine sleeps and hold what the devices hold after it wakes
/// (docs/virtual-device.md, "Suspend and resume").
///
/// - Connects with `sd_bus_open_system` (`DBUS_SYSTEM_BUS_ADDRESS` points it elsewhere: the
///   tests' private bus), matches `org.freedesktop.login1.Manager.PrepareForSleep(b)` and takes
///   a **delay inhibitor** (`Inhibit("sleep", "evflowd", …, "delay")` → an fd): logind waits
///   for the fd to be closed (at most its `InhibitDelayMaxSec`, 5 s by default) before the
///   machine sleeps, so the releases reach the applications before they are frozen.
/// - `PrepareForSleep(true)`: `willSleep` is called with a `ready` closure; calling it (once the
///   releases are written) closes the inhibitor fd and lets the sleep go on.
/// - `PrepareForSleep(false)`: `didResume` is called, and a new delay inhibitor is taken for
///   the next sleep.
///
/// No thread of its own: the connection is a `BusConnection` on the input loop (its fd watched
/// there, its deadline one of the loop's timers, `sd_bus_process` run there); every call goes
/// out asynchronously (nothing waits for a reply). Failures are journal
/// lines, never the daemon's end: no system bus, or no logind on it (the QEMU guest, a
/// container), is said once and the daemon goes on without this. A lost connection is said
/// once and not retried.
///
/// Confined to the input loop's thread: `start()` and `close()` are called there (the daemon
/// schedules them); `close()` must be called before the object goes.
final class SleepMonitor: @unchecked Sendable {
    private let loop: InputLoop
    private let logger: Logger
    private let willSleep: (_ ready: @escaping @Sendable () -> Void) -> Void
    private let didResume: () -> Void

    /// The system bus; nil before `start()`, without a bus, and once disconnected.
    private var connection: BusConnection?
    /// The `AddMatch` of `PrepareForSleep`, and the `Inhibit` call in flight (owned slots:
    /// unreferencing one cancels it).
    private var matchSlot: OpaquePointer?
    private var inhibitSlot: OpaquePointer?
    /// The delay inhibitor: logind holds the sleep back while it is open.
    private var inhibitor: FileDescriptor?
    /// Between `PrepareForSleep(true)` and `(false)`.
    private var sleeping = false
    private var closed = false
    /// Whether the "no logind" line was written (once per connection).
    private var saidNoLogind = false

    static let logind = "org.freedesktop.login1"
    static let logindPath = "/org/freedesktop/login1"
    static let managerInterface = "org.freedesktop.login1.Manager"

    /// A monitor that calls `willSleep` before a sleep (its closure argument closes the delay
    /// inhibitor) and `didResume` after it, on the loop's thread. Nothing happens until `start()`.
    init(loop: InputLoop, logger: Logger, willSleep: @escaping (_ ready: @escaping @Sendable () -> Void) -> Void,
         didResume: @escaping () -> Void) {
        self.loop = loop
        self.logger = logger
        self.willSleep = willSleep
        self.didResume = didResume
    }

    deinit {
        precondition(connection == nil && inhibitor == nil, "SleepMonitor deallocated without close()")
    }

    /// Connects to the system bus, subscribes to `PrepareForSleep` and asks for a delay
    /// inhibitor. Without a bus: one journal line, and nothing else happens. Loop thread only.
    func start() {
        precondition(loop.isCurrent, "SleepMonitor.start must be called on the input loop")
        guard !closed, connection == nil else { return }
        let connection: BusConnection
        do {
            connection = try BusConnection(loop: loop) { [weak self] why in self?.lost(why) }
        } catch {
            logger.notice("suspend/resume: no system bus (\(error)); held keys on virtual devices are not released before a sleep")
            return
        }
        self.connection = connection
        guard let opened = connection.bus else { return }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        var slot: OpaquePointer?
        let match = sd_bus_match_signal_async(opened, &slot, Self.logind, Self.logindPath, Self.managerInterface,
                                              "PrepareForSleep", { message, userdata, _ in
            Unmanaged<SleepMonitor>.fromOpaque(userdata!).takeUnretainedValue().prepareForSleep(message)
            return 0
        }, { message, userdata, _ in
            Unmanaged<SleepMonitor>.fromOpaque(userdata!).takeUnretainedValue().matchInstalled(message)
            return 0
        }, userdata)
        guard match >= 0 else {
            logger.notice("suspend/resume: cannot subscribe to logind's PrepareForSleep (sd_bus_match_signal_async: \(BusError.text(-match))); held keys on virtual devices are not released before a sleep")
            disconnect()
            return
        }
        matchSlot = slot
        takeInhibitor()
        connection.flushSoon()
    }

    /// Disconnects: closes the inhibitor (a sleep waiting for it goes on), cancels the match
    /// and the call in flight, and closes the bus. Idempotent. Loop thread only.
    func close() {
        precondition(loop.isCurrent, "SleepMonitor.close must be called on the input loop")
        closed = true
        disconnect()
    }

    // MARK: Events (on the loop thread, inside sd_bus_process)

    private func matchInstalled(_ message: OpaquePointer?) {
        if let error = Self.error(of: message) {
            logger.notice("suspend/resume: cannot subscribe to logind's PrepareForSleep (\(error)); held keys on virtual devices are not released before a sleep")
        }
    }

    private func prepareForSleep(_ message: OpaquePointer?) {
        var start: Int32 = 0
        let rc = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &start)
        guard rc > 0 else {
            logger.warning("suspend/resume: a PrepareForSleep without its boolean (sd_bus_message_read_basic: \(BusError.text(-rc))); ignored")
            return
        }
        if start != 0 {
            sleeping = true
            let held = inhibitor
            logger.info("before sleep: logind announced a sleep; releasing the keys held on the virtual devices")
            willSleep { [weak self] in
                // This sleep's inhibitor, not one taken after a resume that came meanwhile.
                guard let self, let held, !held.isClosed else { return }
                held.close()
                if inhibitor === held { inhibitor = nil }
                logger.info("before sleep: delay inhibitor closed, the system may sleep")
            }
            if held == nil {
                logger.notice("before sleep: no delay inhibitor was held: the system may sleep before the releases are written")
            }
        } else {
            sleeping = false
            logger.info("after resume: logind announced the resume; setting the virtual devices to the keys down")
            didResume()
            takeInhibitor()
        }
    }

    private func inhibitReply(_ message: OpaquePointer?) {
        if let slot = inhibitSlot { sd_bus_slot_unref(slot) }
        inhibitSlot = nil
        if let error = Self.error(of: message) {
            if !saidNoLogind {
                saidNoLogind = true
                logger.notice("suspend/resume: logind gave no delay inhibitor (\(error)); held keys on virtual devices are not released before a sleep")
            }
            return
        }
        var fd: Int32 = -1
        let rc = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "h")), &fd)
        // The message owns its fd: keep a duplicate.
        let own = rc > 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1
        guard own >= 0 else {
            logger.notice("suspend/resume: logind's Inhibit reply has no fd (\(BusError.text(rc < 0 ? -rc : errno))); held keys on virtual devices are not released before a sleep")
            return
        }
        inhibitor?.close()
        inhibitor = FileDescriptor(owning: own)
        if sleeping {
            // Granted after the sleep was announced: the releases are being written already.
            inhibitor?.close()
            inhibitor = nil
            return
        }
        logger.info("suspend/resume: delay inhibitor taken: a sleep waits until the keys held on virtual devices are released")
    }

    // MARK: Calls

    /// `Inhibit("sleep", "evflowd", why, "delay")`, answered in `inhibitReply`.
    private func takeInhibitor() {
        guard let bus = connection?.bus, inhibitSlot == nil else { return }
        var message: OpaquePointer?
        var rc = sd_bus_message_new_method_call(bus, &message, Self.logind, Self.logindPath, Self.managerInterface, "Inhibit")
        if rc >= 0, let message {
            for argument in ["sleep", "evflowd", "release held keys on virtual devices", "delay"] where rc >= 0 {
                rc = argument.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            }
            if rc >= 0 {
                var slot: OpaquePointer?
                rc = sd_bus_call_async(bus, &slot, message, { reply, userdata, _ in
                    Unmanaged<SleepMonitor>.fromOpaque(userdata!).takeUnretainedValue().inhibitReply(reply)
                    return 0
                }, Unmanaged.passUnretained(self).toOpaque(), 0)
                if rc >= 0 { inhibitSlot = slot }
            }
        }
        if let message { sd_bus_message_unref(message) }
        if rc < 0 {
            logger.notice("suspend/resume: cannot ask logind for a delay inhibitor (\(BusError.text(-rc))); held keys on virtual devices are not released before a sleep")
        }
    }

    // MARK: The connection

    private func lost(_ why: String) {
        logger.notice("suspend/resume: the system bus connection is gone (\(why)); held keys on virtual devices are no longer released before a sleep")
        disconnect()
    }

    private func disconnect() {
        inhibitor?.close()
        inhibitor = nil
        if let slot = inhibitSlot { sd_bus_slot_unref(slot) }
        inhibitSlot = nil
        if let slot = matchSlot { sd_bus_slot_unref(slot) }
        matchSlot = nil
        connection?.close()
        connection = nil
    }

    // MARK: Helpers

    /// A method error's name and message, nil when `message` is not an error.
    private static func error(of message: OpaquePointer?) -> String? {
        guard let message, sd_bus_message_is_method_error(message, nil) > 0 else { return nil }
        guard let error = sd_bus_message_get_error(message) else { return "an error" }
        let name = error.pointee.name.map { String(cString: $0) } ?? "an error"
        let text = error.pointee.message.map { String(cString: $0) }
        return text.map { "\(name): \($0)" } ?? name
    }
}
