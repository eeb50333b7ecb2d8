import DeviceIO
import CEvdev
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// An open evdev node with its libevdev handle.
///
/// Owns the fd (closed explicitly by `close()`, as `FileDescriptor` requires) and the
/// `struct libevdev *` (freed in `deinit`; `libevdev_free` does not close the fd, so the two
/// are released separately and in that order).
final class EvdevDevice {
    let path: String
    let fd: FileDescriptor
    let handle: OpaquePointer

    /// Opens `path` non-blocking, attaches libevdev and switches the event clock to
    /// `CLOCK_MONOTONIC` so timestamps agree with scheduler time (docs/architecture.md, "Time").
    init(path: String) throws(SystemError) {
        let fd = try FileDescriptor.openForReading(path)
        var dev: OpaquePointer?
        // Before libevdev reads the kernel's state: every event queued on the fd is no older.
        let openedAt = monotonicNow()
        let rc = libevdev_new_from_fd(fd.rawValue, &dev)
        guard rc >= 0, let dev else {
            fd.close()
            throw SystemError(call: "libevdev_new_from_fd(\(path))", errno: rc < 0 ? -rc : ENOMEM)
        }
        let clockRC = libevdev_set_clock_id(dev, CLOCK_MONOTONIC)
        if clockRC < 0 {
            libevdev_free(dev)
            fd.close()
            throw SystemError(call: "libevdev_set_clock_id(\(path), CLOCK_MONOTONIC)", errno: -clockRC)
        }
        self.path = path
        self.fd = fd
        self.handle = dev
        self.openedAt = openedAt
    }

    /// When the device was opened (monotonic ns), just before libevdev read its state.
    let openedAt: Int64

    /// The keys and switches that were down or on when the device was opened, as one frame
    /// stamped `openedAt` (nil when none were): what a reader must know before the first event,
    /// since the kernel reports changes only. A key held through a daemon restart, or a lid
    /// closed before start-up, is in it; its release or opening then follows as events.
    /// Absolute axes are not: their values are in the description's `AbsInfo`.
    var stateAtOpen: InputFrame? {
        var events: [InputEvent] = []
        for type in [UInt32(EV_KEY), UInt32(EV_SW)] where libevdev_has_event_type(handle, type) == 1 {
            let max = libevdev_event_type_get_max(type)
            guard max >= 0 else { continue }
            for code in 0...UInt32(max) where libevdev_has_event_code(handle, type, code) == 1 {
                let value = libevdev_get_event_value(handle, type, code)
                if value != 0 {
                    events.append(InputEvent(time: openedAt, type: UInt16(type), code: UInt16(code), value: value))
                }
            }
        }
        return events.isEmpty ? nil : InputFrame(time: openedAt, events: events)
    }

    deinit {
        libevdev_free(handle)
        precondition(fd.isClosed, "EvdevDevice \(path) deallocated with its fd open")
    }

    /// Closes the fd; the handle is freed when the object goes.
    func close() { fd.close() }

    /// What libevdev knows about the device.
    var snapshot: EvdevSnapshot {
        func string(_ p: UnsafePointer<CChar>?) -> String? {
            guard let p else { return nil }
            let s = String(cString: p)
            return s.isEmpty ? nil : s
        }
        var capabilities: [UInt16: Set<UInt16>] = [:]
        var absInfo: [UInt16: AbsInfo] = [:]
        for type in 1...UInt32(EV_MAX) where libevdev_has_event_type(handle, type) == 1 {
            var codes = Set<UInt16>()
            let max = libevdev_event_type_get_max(type)
            if max >= 0 {
                for code in 0...UInt32(max) where libevdev_has_event_code(handle, type, code) == 1 {
                    codes.insert(UInt16(code))
                    if type == UInt32(EV_ABS), let a = libevdev_get_abs_info(handle, code) {
                        absInfo[UInt16(code)] = AbsInfo(value: a.pointee.value, minimum: a.pointee.minimum,
                                                         maximum: a.pointee.maximum, fuzz: a.pointee.fuzz,
                                                         flat: a.pointee.flat, resolution: a.pointee.resolution)
                    }
                }
            }
            capabilities[UInt16(type)] = codes
        }
        var props = Set<UInt16>()
        for prop in 0...UInt32(INPUT_PROP_MAX) where libevdev_has_property(handle, prop) == 1 {
            props.insert(UInt16(prop))
        }
        let id = InputID(bustype: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(handle)),
                         vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(handle)),
                         product: UInt16(truncatingIfNeeded: libevdev_get_id_product(handle)),
                         version: UInt16(truncatingIfNeeded: libevdev_get_id_version(handle)))
        return EvdevSnapshot(name: string(libevdev_get_name(handle)) ?? "", inputID: id,
                             phys: string(libevdev_get_phys(handle)), uniq: string(libevdev_get_uniq(handle)),
                             capabilities: capabilities, absInfo: absInfo, inputProperties: props)
    }

    /// What one `libevdev_next_event` call produced.
    enum ReadOutcome {
        /// A normal event.
        case event(InputEvent)
        /// The kernel dropped events: this is the `SYN_DROPPED`; fetch the resync with `sync: true`.
        case dropped(InputEvent)
        /// Nothing more to read now (or, in sync mode, the resync is complete).
        case drained
    }

    /// Reads one event (`sync` selects `LIBEVDEV_READ_FLAG_SYNC` for the resync after a drop).
    /// Throws ENODEV when the device is gone.
    func next(sync: Bool) throws(SystemError) -> ReadOutcome {
        var ev = input_event()
        let flags = sync ? LIBEVDEV_READ_FLAG_SYNC.rawValue : LIBEVDEV_READ_FLAG_NORMAL.rawValue
        switch try SystemCall.runNegativeErrno("libevdev_next_event(\(path))", { libevdev_next_event(handle, flags, &ev) }) {
        case .wouldBlock:
            return .drained
        case .done(let status):
            let event = InputEvent(time: Int64(ev.time.tv_sec) * 1_000_000_000 + Int64(ev.time.tv_usec) * 1_000,
                                   type: ev.type, code: ev.code, value: ev.value)
            if status == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                return sync ? .event(event) : .dropped(event)
            }
            return .event(event)
        }
    }
}
