import CSystemd
import InputDevices
import Reactive
import SensorProxy
#if canImport(Glibc)
import Glibc
#endif

/// An sd-bus connection to the system bus driven by the input loop (`SleepMonitor`'s and
/// `SensorProxyBus`'s): the bus fd is watched there (`sd_bus_get_events`), its deadline is one
/// of the loop's timers (`sd_bus_get_timeout`), and `sd_bus_process` runs there, so every
/// callback sd-bus makes runs on the loop's thread. `sd_bus_open_system` honours `DBUS_SYSTEM_BUS_ADDRESS` (the tests'
/// private bus). Loop thread only; `close()` before the object goes.
final class BusConnection: @unchecked Sendable {
    private let loop: InputLoop
    /// Called once when the connection fails after it was opened (the peer hung up).
    private let onLost: (String) -> Void
    /// The connection; nil once closed.
    private(set) var bus: OpaquePointer?
    private var busFD: Int32 = -1
    private var token: InputLoop.Token?
    private var interest: InputLoop.Interest = .readable
    private var timer: SchedulerTimer?

    /// Opens the system bus and puts it on `loop`; throws the errno of the failing call.
    init(loop: InputLoop, onLost: @escaping (String) -> Void) throws(BusError) {
        precondition(loop.isCurrent, "BusConnection must be opened on the input loop")
        self.loop = loop
        self.onLost = onLost
        var opened: OpaquePointer?
        let rc = sd_bus_open_system(&opened)
        guard rc >= 0, let opened else { throw BusError(call: "sd_bus_open_system", code: -rc) }
        let fd = sd_bus_get_fd(opened)
        guard fd >= 0 else {
            sd_bus_close_unref(opened)
            throw BusError(call: "sd_bus_get_fd", code: -fd)
        }
        bus = opened
        busFD = fd
        token = loop.register(fd: fd, interest: interest) { [weak self] in
            self?.pump() ?? .drained
        }
        timer = loop.makeTimer { [weak self] _ in
            if self?.pump() == .morePending { self?.schedulePump() }
        }
    }

    deinit {
        precondition(bus == nil, "BusConnection deallocated without close()")
    }

    /// Lets sd-bus send what was queued (call it after queueing messages outside a callback).
    func flushSoon() {
        loop.schedule { [weak self] in
            if self?.pump() == .morePending { self?.schedulePump() }
        }
    }

    /// Closes the connection (the bus releases its names). Idempotent.
    func close() {
        if let token, busFD >= 0 { loop.unregister(token, fd: busFD) }
        token = nil
        busFD = -1
        timer?.invalidate()
        timer = nil
        // No sd_bus_flush: it waits without a limit on the input loop. What was queued is
        // dropped; the bus releases the connection's names when it closes.
        if let bus { sd_bus_close_unref(bus) }
        bus = nil
    }

    /// Reads, writes, times out and dispatches (at most 64 messages a turn), then watches the
    /// fd and sets the timer for what sd-bus wants next.
    private func pump() -> InputLoop.Outcome {
        guard let bus else { return .drained }
        var outcome = InputLoop.Outcome.drained
        var processed = 0
        while true {
            let rc = sd_bus_process(bus, nil)
            if rc < 0 {
                lost("sd_bus_process: \(BusError.text(-rc))")
                return .drained
            }
            if rc == 0 { break }
            processed += 1
            if processed == 64 {
                outcome = .morePending
                break
            }
        }
        guard self.bus != nil else { return .drained }
        if sd_bus_is_open(bus) <= 0 {
            lost("the connection was closed")
            return .drained
        }
        let events = sd_bus_get_events(bus)
        var wanted: InputLoop.Interest = []
        if events > 0 {
            if events & Int32(POLLIN) != 0 { wanted.insert(.readable) }
            if events & Int32(POLLOUT) != 0 { wanted.insert(.writable) }
        }
        if wanted.isEmpty { wanted = .readable }
        if wanted != interest, let token {
            interest = wanted
            loop.update(token, fd: busFD, interest: wanted)
        }
        var usec: UInt64 = 0
        if sd_bus_get_timeout(bus, &usec) >= 0, usec != UInt64.max {
            timer?.arm(at: usec > UInt64(Int64.max / 1000) ? .max : Int64(usec) * 1000, token: 0)
        } else {
            timer?.disarm()
        }
        return outcome
    }

    private func schedulePump() {
        loop.schedule { [weak self] in
            if self?.pump() == .morePending { self?.schedulePump() }
        }
    }

    private func lost(_ why: String) {
        close()
        onLost(why)
    }
}

/// A failed sd-bus call: its name and errno.
struct BusError: Error, CustomStringConvertible {
    let call: String
    let code: Int32

    var description: String { "\(call): \(Self.text(code))" }

    static func text(_ code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }
}

/// Building and reading messages with sd-bus's non-variadic calls (Swift cannot call
/// `sd_bus_message_append` or `sd_bus_message_read`). Each returns sd-bus's result: < 0 is −errno.
enum BusMessage {
    static func type(_ c: Character) -> CChar { CChar(UInt8(ascii: c.unicodeScalars.first!)) }

    /// Appends a string.
    static func append(_ m: OpaquePointer, string: String) -> Int32 {
        string.withCString { sd_bus_message_append_basic(m, type("s"), $0) }
    }

    /// Appends a property value inside a variant (`v`).
    static func append(_ m: OpaquePointer, variant value: ProxyValue) -> Int32 {
        var rc = sd_bus_message_open_container(m, type("v"), value.signature)
        guard rc >= 0 else { return rc }
        switch value {
        case .bool(let b):
            var v: Int32 = b ? 1 : 0
            rc = sd_bus_message_append_basic(m, type("b"), &v)
        case .double(let d):
            var v = d
            rc = sd_bus_message_append_basic(m, type("d"), &v)
        case .string(let s):
            rc = append(m, string: s)
        }
        guard rc >= 0 else { return rc }
        return sd_bus_message_close_container(m)
    }

    /// Appends `a{sv}`: names and values.
    static func append(_ m: OpaquePointer, dictionary: [(name: String, value: ProxyValue)]) -> Int32 {
        var rc = sd_bus_message_open_container(m, type("a"), "{sv}")
        for (name, value) in dictionary where rc >= 0 {
            rc = sd_bus_message_open_container(m, type("e"), "sv")
            if rc >= 0 { rc = append(m, string: name) }
            if rc >= 0 { rc = append(m, variant: value) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
        }
        guard rc >= 0 else { return rc }
        return sd_bus_message_close_container(m)
    }

    /// Reads the next argument as a string; nil when it is none.
    static func readString(_ m: OpaquePointer) -> String? {
        var pointer: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, type("s"), &pointer) > 0, let pointer else { return nil }
        return String(cString: pointer)
    }

    /// A C string sd-bus returned, as a Swift string.
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
}
