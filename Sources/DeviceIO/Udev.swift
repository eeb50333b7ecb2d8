import CUdev
#if canImport(Glibc)
import Glibc
#endif

/// Owns a `struct udev *` context; unreferenced in `deinit`.
///
/// `package`: the Sensors module discovers IIO devices through the same wrappers, so libudev
/// stays imported by this module only.
package final class UdevContext {
    package let handle: OpaquePointer

    package init() throws(SystemError) {
        guard let handle = udev_new() else { throw SystemError(call: "udev_new", errno: Glibc.errno == 0 ? ENOMEM : Glibc.errno) }
        self.handle = handle
    }

    deinit { udev_unref(handle) }

    /// The `input` devices with an `event*` node, in sysfs order.
    package func enumerateEventDevices() throws(SystemError) -> [UdevDevice] {
        try enumerate(subsystem: "input", sysname: "event*")
    }

    /// The devices of `subsystem` whose sysname matches the glob `sysname`, in sysfs order.
    package func enumerate(subsystem: String, sysname: String) throws(SystemError) -> [UdevDevice] {
        guard let enumerate = udev_enumerate_new(handle) else {
            throw SystemError(call: "udev_enumerate_new", errno: ENOMEM)
        }
        defer { udev_enumerate_unref(enumerate) }
        var rc = udev_enumerate_add_match_subsystem(enumerate, subsystem)
        if rc < 0 { throw SystemError(call: "udev_enumerate_add_match_subsystem", errno: -rc) }
        rc = udev_enumerate_add_match_sysname(enumerate, sysname)
        if rc < 0 { throw SystemError(call: "udev_enumerate_add_match_sysname", errno: -rc) }
        rc = udev_enumerate_scan_devices(enumerate)
        if rc < 0 { throw SystemError(call: "udev_enumerate_scan_devices", errno: -rc) }
        var result: [UdevDevice] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let e = entry {
            if let path = udev_list_entry_get_name(e),
               let device = udev_device_new_from_syspath(handle, path) {
                result.append(UdevDevice(owning: device))
            }
            entry = udev_list_entry_get_next(e)
        }
        return result
    }
}

/// Owns a `struct udev_monitor *` listening for some subsystems' uevents after udev processed them.
///
/// Its socket fd belongs to the monitor (`udev_monitor_unref` closes it); it is non-blocking.
package final class UdevMonitor {
    package let handle: OpaquePointer
    package let context: UdevContext   // the monitor refers to its context: keep it alive

    /// Listens for `subsystem`'s uevents and those of `alsoSubsystems`; `receiveBuffer` bytes of
    /// socket buffer hold them while the reader is busy (forced past `rmem_max` when the process
    /// may, as udevd does).
    package init(context: UdevContext, subsystem: String = "input", alsoSubsystems: [String] = [],
                 receiveBuffer: Int) throws(SystemError) {
        guard let handle = udev_monitor_new_from_netlink(context.handle, "udev") else {
            throw SystemError(call: "udev_monitor_new_from_netlink(udev)", errno: Glibc.errno == 0 ? EINVAL : Glibc.errno)
        }
        self.handle = handle
        self.context = context
        var rc: Int32 = 0
        for s in [subsystem] + alsoSubsystems {
            rc = udev_monitor_filter_add_match_subsystem_devtype(handle, s, nil)
            if rc < 0 { throw SystemError(call: "udev_monitor_filter_add_match_subsystem_devtype", errno: -rc) }
        }
        rc = udev_monitor_enable_receiving(handle)
        if rc < 0 { throw SystemError(call: "udev_monitor_enable_receiving", errno: -rc) }
        // libudev tries SO_RCVBUFFORCE, then SO_RCVBUF (capped by net.core.rmem_max): the
        // buffer is an optimisation, and an overflow is caught by `receive` anyway.
        _ = udev_monitor_set_receive_buffer_size(handle, Int32(clamping: receiveBuffer))
    }

    /// What `receive` found.
    package enum Received {
        /// The next uevent.
        case device(UdevDevice)
        /// The socket overflowed (`ENOBUFS`): uevents were lost; re-enumerate to catch up.
        case overflow
        /// Nothing is waiting.
        case empty
    }

    deinit { udev_monitor_unref(handle) }

    /// The socket to watch for readability (owned by the monitor).
    package var fd: Int32 { udev_monitor_get_fd(handle) }

    /// The next queued uevent, an overflow, or nothing.
    ///
    /// libudev returns NULL both when nothing is waiting and when a message is discarded
    /// (wrong sender, filtered out), so NULL with `ENOBUFS` is the overflow, and NULL with
    /// anything other than `EAGAIN` is read past to the next message.
    package func receive() -> Received {
        while true {
            Glibc.errno = 0
            if let device = udev_monitor_receive_device(handle) { return .device(UdevDevice(owning: device)) }
            switch Glibc.errno {
            case ENOBUFS: return .overflow
            case EAGAIN, 0: return .empty
            case EINTR: continue
            default:
                // A message libudev rejected; the socket may still hold more. Stop when it
                // has nothing (a zero-timeout poll), so a hard error cannot spin.
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, 0) != 1 { return .empty }
            }
        }
    }
}

/// Owns one `struct udev_device *` reference. Its parents are borrowed: they live as long as
/// this child and are never unreferenced here.
package final class UdevDevice {
    package let handle: OpaquePointer

    package init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { udev_device_unref(handle) }

    package var syspath: String { udev_device_get_syspath(handle).map { String(cString: $0) } ?? "" }
    package var sysname: String { udev_device_get_sysname(handle).map { String(cString: $0) } ?? "" }
    package var subsystem: String? { udev_device_get_subsystem(handle).map { String(cString: $0) } }
    package var devnode: String? { udev_device_get_devnode(handle).map { String(cString: $0) } }
    package var action: String? { udev_device_get_action(handle).map { String(cString: $0) } }
    package var isInitialized: Bool { udev_device_get_is_initialized(handle) > 0 }

    /// All udev properties (`ID_INPUT_KEYBOARD=1`, `ID_PATH=...`).
    package var properties: [String: String] {
        var result: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(handle)
        while let e = entry {
            if let name = udev_list_entry_get_name(e) {
                result[String(cString: name)] = udev_list_entry_get_value(e).map { String(cString: $0) } ?? ""
            }
            entry = udev_list_entry_get_next(e)
        }
        return result
    }

    /// The sysfs attributes of the parent `inputN` device that describe it (name, phys, uniq,
    /// id/*), read without opening the node: what `.inaccessible` can still report.
    package var inputParentAttributes: [String: String] {
        // Borrowed: the parent belongs to `handle` and must not be unreferenced.
        guard let parent = udev_device_get_parent_with_subsystem_devtype(handle, "input", nil) else { return [:] }
        var result: [String: String] = [:]
        for attr in ["name", "phys", "uniq", "id/bustype", "id/vendor", "id/product", "id/version"] {
            if let value = udev_device_get_sysattr_value(parent, attr) {
                result[attr] = String(cString: value)
            }
        }
        return result
    }
}
