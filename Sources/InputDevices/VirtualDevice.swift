import DeviceIO
import CEvdev
import InputModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A uinput virtual device that clones a physical one: evflowd's *twin*, which applications
/// read instead of the grabbed physical device (docs/virtual-device.md).
///
/// Cloned: every event type and code (`EV_KEY`, `EV_REL`, `EV_ABS` with its absinfo, `EV_MSC`,
/// `EV_SW`, `EV_LED`, `EV_SND`, `EV_REP`, `EV_FF`: libevdev gives a twin with `EV_FF` room for
/// 10 effects, `ff_effects_max`, and the owner forwards them), the input properties, the id
/// (bus, vendor, product, version — the same bus, so libinput still pairs an internal keyboard
/// with its touchpad for disable-while-typing). The name is the physical name with ` (evflow)`
/// appended (cut so the whole fits uinput's 80 bytes). `phys` and `uniq` are left empty:
/// libevdev's uinput creation sets neither, uinput cannot set `uniq` at all, and an empty
/// `phys` keeps a rule that matches the physical device by `phys` off the twin.
///
/// Created through libevdev's uinput API (`LIBEVDEV_UINPUT_OPEN_MANAGED`: libevdev opens and
/// closes `/dev/uinput`). Tracks the keys and buttons held on the twin, so `releaseAll` can
/// release them; `destroy` always does that first. Confined to the input thread.
final class VirtualDevice {
    /// What every twin's name ends with; udev rules recognise twins by it (with the device
    /// being under `/devices/virtual/input`).
    static let nameSuffix = " (evflow)"
    /// uinput's name limit (`UINPUT_MAX_NAME_SIZE`), the terminating NUL included.
    static let maxNameBytes = 80

    /// The twin's event node, e.g. `/dev/input/event7`.
    let devnode: String
    /// The twin's `inputN` syspath, e.g. `/sys/devices/virtual/input/input12`.
    let syspath: String
    // `uinput` and `scratch` are read per forwarded frame; the device is confined to the input
    // thread and no access spans a call out, so they skip the run-time exclusivity check (two
    // calls into the Swift runtime a frame, ~170 instructions of U1's).
    @exclusivity(unchecked) private var uinput: OpaquePointer?
    /// `EV_KEY` codes down on the twin, in the order they went down.
    private(set) var held: [UInt16] = []

    /// Creates the twin of the device behind `source` (an open libevdev handle).
    init(cloning source: OpaquePointer) throws(SystemError) {
        guard let template = libevdev_new() else { throw SystemError(call: "libevdev_new", errno: ENOMEM) }
        defer { libevdev_free(template) }
        Self.copy(from: source, to: template)
        var created: OpaquePointer?
        let rc = libevdev_uinput_create_from_device(template, LIBEVDEV_UINPUT_OPEN_MANAGED.rawValue, &created)
        guard rc >= 0, let created else {
            throw SystemError(call: "libevdev_uinput_create_from_device(/dev/uinput)", errno: rc < 0 ? -rc : ENOMEM)
        }
        uinput = created
        syspath = libevdev_uinput_get_syspath(created).map { String(cString: $0) } ?? ""
        devnode = libevdev_uinput_get_devnode(created).map { String(cString: $0) } ?? ""
        // The LED/SND write-back reads this fd on the input thread: it must never block it.
        let fd = libevdev_uinput_get_fd(created)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        hasRepeat = libevdev_has_event_type(template, UInt32(EV_REP)) == 1
        disableRepeat()
    }

    /// Whether the twin has `EV_REP` (it clones the physical device's).
    private let hasRepeat: Bool

    /// Switches the kernel's software autorepeat on the twin off. The physical device's own
    /// autorepeat (value 2) is forwarded; the kernel's repeat on the twin would add a second
    /// stream of repeats (the input core repeats only while REP_PERIOD and REP_DELAY are both
    /// non-zero). At creation, and again whenever something sets a rate on the twin.
    func disableRepeat() {
        guard hasRepeat, let uinput else { return }
        _ = libevdev_uinput_write_event(uinput, UInt32(EV_REP), UInt32(REP_PERIOD), 0)
        _ = libevdev_uinput_write_event(uinput, UInt32(EV_SYN), UInt32(SYN_REPORT), 0)
    }

    deinit {
        // The owner destroys the twin on purpose (after `releaseAll`); this is the backstop.
        destroy()
    }

    /// The `/dev/uinput` fd: the desktop's `EV_LED`/`EV_SND` writes to the twin arrive on it,
    /// and a game's force-feedback requests (`EV_UINPUT`) and `EV_FF` plays.
    var fd: Int32 { uinput.map { libevdev_uinput_get_fd($0) } ?? -1 }

    /// Whether `destroy` ran.
    var isDestroyed: Bool { uinput == nil }

    /// The twin's name for a physical device called `name`: `name (evflow)`, the physical
    /// name cut at a character boundary so the whole fits uinput's limit.
    static func twinName(for name: String) -> String {
        let room = maxNameBytes - 1 - nameSuffix.utf8.count
        var kept = Substring(name)
        while kept.utf8.count > room { kept = kept.dropLast() }
        return kept + nameSuffix
    }

    /// Writes `frame`'s events and one `SYN_REPORT` (the frame's own is not repeated) in one
    /// `write(2)`: uinput takes any number of whole events per write and injects them in
    /// order, so a frame costs one system call, not one per event (`encode`). A short write
    /// is a failure, as any other.
    func write(_ frame: InputFrame) throws(SystemError) {
        guard let uinput else { throw SystemError(call: "write(/dev/uinput)", errno: ENODEV) }
        try Self.write(frame, to: libevdev_uinput_get_fd(uinput), using: &scratch)
        for event in frame.events where event.type == UInt16(EV_KEY) { track(code: event.code, value: event.value) }
    }

    /// `frame` (`encode`) in one `write(2)` to `fd`; `scratch` is reused between frames.
    static func write(_ frame: InputFrame, to fd: Int32, using scratch: inout [input_event]) throws(SystemError) {
        let size = encode(frame, into: &scratch) * MemoryLayout<input_event>.size
        let written = scratch.withUnsafeBytes { buffer in
            var n: Int
            repeat { n = Glibc.write(fd, buffer.baseAddress, size) } while n < 0 && errno == EINTR
            return n
        }
        if written < 0 { throw SystemError(call: "write(/dev/uinput)", errno: errno) }
        if written != size { throw SystemError(call: "write(/dev/uinput): \(written) of \(size) bytes", errno: EIO) }
    }

    /// Reused for every frame: a frame's events as the kernel's `input_event`s.
    @exclusivity(unchecked) private var scratch: [input_event] = []

    /// `frame` as uinput takes it: its events without `SYN_REPORT`s, then one `SYN_REPORT`
    /// (times zero: the input core stamps what it injects), written over the start of `out`;
    /// returns how many. `out` only grows (to the longest frame's length), so a frame costs
    /// no allocation and no `removeAll` — which went through the standard library's generic
    /// `replaceSubrange`, a third of this function's instructions in U1's profile.
    static func encode(_ frame: InputFrame, into out: inout [input_event]) -> Int {
        let needed = frame.events.count + 1
        if out.count < needed { out.append(contentsOf: repeatElement(input_event(), count: needed - out.count)) }
        return out.withUnsafeMutableBufferPointer { buffer in
            var n = 0
            for event in frame.events where !(event.type == UInt16(EV_SYN) && event.code == UInt16(SYN_REPORT)) {
                buffer[n] = input_event(time: timeval(), type: event.type, code: event.code, value: event.value)
                n += 1
            }
            buffer[n] = input_event(time: timeval(), type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0)
            return n + 1
        }
    }

    /// Writes a release for every key and button held on the twin, then a `SYN_REPORT`;
    /// nothing when none is held. Best effort: the held set is emptied either way.
    func releaseAll() {
        defer { held = [] }
        guard let uinput, !held.isEmpty else { return }
        for code in held { _ = libevdev_uinput_write_event(uinput, UInt32(EV_KEY), UInt32(code), 0) }
        _ = libevdev_uinput_write_event(uinput, UInt32(EV_SYN), UInt32(SYN_REPORT), 0)
    }

    /// Releases what is held, then destroys the twin (and closes `/dev/uinput`). Idempotent.
    func destroy() {
        guard let uinput else { return }
        releaseAll()
        self.uinput = nil
        libevdev_uinput_destroy(uinput)
    }

    private func track(code: UInt16, value: Int32) {
        if value == 0 {
            held.removeAll { $0 == code }
        } else if !held.contains(code) {
            held.append(code)
        }
    }

    /// Copies what the twin clones (the type's comment says what) from `source` to `target`.
    private static func copy(from source: OpaquePointer, to target: OpaquePointer) {
        let name = libevdev_get_name(source).map { String(cString: $0) } ?? ""
        libevdev_set_name(target, twinName(for: name))
        libevdev_set_id_bustype(target, libevdev_get_id_bustype(source))
        libevdev_set_id_vendor(target, libevdev_get_id_vendor(source))
        libevdev_set_id_product(target, libevdev_get_id_product(source))
        libevdev_set_id_version(target, libevdev_get_id_version(source))
        for type in 1...UInt32(EV_MAX) where libevdev_has_event_type(source, type) == 1 {
            libevdev_enable_event_type(target, type)
            let max = libevdev_event_type_get_max(type)
            guard max >= 0 else { continue }
            for code in 0...UInt32(max) where libevdev_has_event_code(source, type, code) == 1 {
                switch Int32(type) {
                case EV_ABS:
                    if let abs = libevdev_get_abs_info(source, code) {
                        var info = abs.pointee
                        libevdev_enable_event_code(target, type, code, &info)
                    }
                case EV_REP:
                    var value = libevdev_get_event_value(source, type, code)
                    libevdev_enable_event_code(target, type, code, &value)
                default:
                    libevdev_enable_event_code(target, type, code, nil)
                }
            }
        }
        for prop in 0...UInt32(INPUT_PROP_MAX) where libevdev_has_property(source, prop) == 1 {
            libevdev_enable_property(target, prop)
        }
    }
}

/// The twins this process created, so the device monitor never opens one as an input (a
/// feedback loop: its own output read back, filtered again and written again).
///
/// Keyed by the twin's `inputN` syspath and its event node; an `eventN` whose syspath lies
/// under a registered `inputN`, or whose node is a registered one, is a twin. Udev's
/// `EVFLOW_VIRTUAL=1` (set by the shipped rule) and what that rule matches — a virtual input
/// device named `… (evflow)` — catch the rest: another evflowd's twins, and a twin destroyed
/// before its udev `add` arrived (it has left the registry by then).
public enum VirtualTwins {
    private static let registered = Mutex<(syspaths: Set<String>, devnodes: Set<String>)>(([], []))

    static func add(syspath: String, devnode: String) {
        registered.withLock { r in
            if !syspath.isEmpty { r.syspaths.insert(syspath) }
            if !devnode.isEmpty { r.devnodes.insert(devnode) }
        }
    }

    static func remove(syspath: String, devnode: String) {
        registered.withLock { r in
            r.syspaths.remove(syspath)
            r.devnodes.remove(devnode)
        }
    }

    /// The number of twins alive in this process.
    public static var count: Int { registered.withLock { $0.syspaths.count } }

    /// Whether the event device at `syspath` (node `devnode`, udev `properties`, called `name`)
    /// is a twin: one of this process's, one marked `EVFLOW_VIRTUAL=1` by udev, or a virtual
    /// input device whose name ends in ` (evflow)`.
    public static func isTwin(syspath: String, devnode: String?, properties: [String: String], name: String = "") -> Bool {
        if properties["EVFLOW_VIRTUAL"] == "1" { return true }
        if syspath.hasPrefix("/sys/devices/virtual/input/") && name.hasSuffix(VirtualDevice.nameSuffix) { return true }
        let parent = String(syspath[..<(syspath.lastIndex(of: "/") ?? syspath.endIndex)])
        return registered.withLock { r in
            r.syspaths.contains(parent) || r.syspaths.contains(syspath) || devnode.map { r.devnodes.contains($0) } == true
        }
    }
}
