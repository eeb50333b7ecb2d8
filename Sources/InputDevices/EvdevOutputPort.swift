import DeviceIO
import CEvdev
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// The live device's `DeviceOutputPort`: its twin (`VirtualDevice`), the grab, and the
/// write-back of the LEDs and sounds the desktop sets on the twin to the physical device, and
/// of the force feedback a game uploads and plays on it (`ForceFeedbackRelay`).
///
/// Confined to the input thread (the hub calls it there). Holds the `EvdevDevice` (the
/// reader owns and closes its fd): when the device is gone, grabbing and ungrabbing are moot
/// (the kernel dropped the grab with the fd) and are skipped.
final class EvdevOutputPort: DeviceOutputPort, @unchecked Sendable {
    private let device: EvdevDevice
    private let loop: InputLoop
    private var twin: VirtualDevice?
    private var twinToken: InputLoop.Token?
    /// The physical node opened for writing, for the LED/SND write-back and the force
    /// feedback: only while a twin exists, so an observed device is never opened for writing.
    private var writeBack: FileDescriptor?
    /// The effects uploaded through the twin (a device with `EV_FF` only).
    private var forceFeedback = ForceFeedbackRelay()
    private var grabbed = false
    private var grabbedAt: Int64 = 0

    init(device: EvdevDevice, loop: InputLoop) {
        self.device = device
        self.loop = loop
    }

    deinit {
        // The hub releases on purpose; this is the backstop (the loop thread drops the last
        // reference, since the hub lives there).
        releaseAll()
        destroyTwin()
        ungrab()
    }

    /// Whether the device has force feedback (`EV_FF`: game pads, wheels, some joysticks).
    private var hasForceFeedback: Bool { libevdev_has_event_type(device.handle, UInt32(EV_FF)) == 1 }

    /// A device with force feedback whose node evflowd may not open for reading and writing:
    /// its twin could not forward a game's effects, and rumble would be silently lost.
    var virtualRefusal: String? {
        guard hasForceFeedback else { return nil }
        // The effective ids, as open(2) will judge them.
        guard faccessat(AT_FDCWD, device.path, R_OK | W_OK, AT_EACCESS) != 0 else { return nil }
        return Self.forceFeedbackRefusal(SystemError(call: "access(\(device.path), read and write)", errno: errno))
    }

    /// The refusal of a device whose force feedback cannot be forwarded, because of `error`.
    static func forceFeedbackRefusal(_ error: SystemError) -> String {
        "force feedback cannot be forwarded: \(error)"
    }

    func createTwin() throws(DeviceOutputError) -> String {
        if let twin { return twin.devnode }
        if let refusal = virtualRefusal { throw DeviceOutputError(.failed, refusal) }
        if device.fd.isClosed { throw DeviceOutputError(.failed, "\(device.path) is closed") }
        // Opened before the twin exists: a device with force feedback needs it (the effects go
        // through it), so without it no twin is made. O_RDWR for those (as a game opens a pad
        // for EVIOCSFF); otherwise O_WRONLY, as the write-back only writes, and without write
        // access (a unit that allows the input nodes read-only) the twin still works, with LEDs
        // left alone.
        let fd = Glibc.open(device.path, (hasForceFeedback ? O_RDWR : O_WRONLY) | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 && hasForceFeedback {
            throw DeviceOutputError(.failed, Self.forceFeedbackRefusal(SystemError(call: "open(\(device.path))", errno: errno)))
        }
        if fd >= 0 { writeBack = FileDescriptor(owning: fd) }
        let twin: VirtualDevice
        do {
            twin = try VirtualDevice(cloning: device.handle)
        } catch {
            writeBack?.close()
            writeBack = nil
            throw DeviceOutputError(.failed, error.description)
        }
        VirtualTwins.add(syspath: twin.syspath, devnode: twin.devnode)
        self.twin = twin
        twinToken = loop.register(fd: twin.fd) { [weak self] in
            self?.forwardFeedback()
            return .drained
        }
        return twin.devnode
    }

    func grab() throws(DeviceOutputError) -> Int64 {
        if grabbed { return grabbedAt }
        guard !device.fd.isClosed else { throw DeviceOutputError(.failed, "\(device.path) is closed") }
        let rc = libevdev_grab(device.handle, LIBEVDEV_GRAB)
        if rc == -EBUSY { throw DeviceOutputError(.busy, SystemError(call: "libevdev_grab(\(device.path))", errno: EBUSY).description) }
        if rc < 0 { throw DeviceOutputError(.failed, SystemError(call: "libevdev_grab(\(device.path))", errno: -rc).description) }
        grabbed = true
        // After the ioctl returned: every frame the kernel delivered before the grab took
        // effect is stamped no later than this.
        grabbedAt = monotonicNow()
        return grabbedAt
    }

    func write(_ frame: InputFrame) throws(DeviceOutputError) {
        guard let twin else { throw DeviceOutputError(.failed, "no virtual device") }
        do {
            try twin.write(frame)
        } catch {
            throw DeviceOutputError(.failed, error.description)
        }
    }

    func releaseAll() { twin?.releaseAll() }

    func destroyTwin() {
        guard let twin else { return }
        // Off the loop only as deinit's backstop: closing the fd takes it out of epoll then.
        if let twinToken, loop.isCurrent { loop.unregister(twinToken, fd: twin.fd) }
        twinToken = nil
        twin.destroy()   // releases whatever is still held first
        VirtualTwins.remove(syspath: twin.syspath, devnode: twin.devnode)
        self.twin = nil
        // After the twin: its games' own erases fail at once now (ENODEV), so none is pending.
        // Closing the fd would erase these too (the input core flushes a closing file's
        // effects); erased here on purpose, while the fd is known open.
        if let writeBack, !writeBack.isClosed { forceFeedback.eraseAll(on: PhysicalForceFeedback(fd: writeBack.rawValue)) }
        forceFeedback = ForceFeedbackRelay()
        writeBack?.close()
        writeBack = nil
    }

    func ungrab() {
        guard grabbed else { return }
        grabbed = false
        if !device.fd.isClosed { _ = libevdev_grab(device.handle, LIBEVDEV_UNGRAB) }
    }

    func keysDown() -> Set<UInt16>? {
        guard !device.fd.isClosed else { return nil }
        // KEY_MAX + 1 bits; libevdev's own key state is what it has read so far, which after a
        // resume lags the kernel's by the events still queued.
        var bits = [UInt8](repeating: 0, count: (Int(KEY_MAX) + 8) / 8)
        let rc = bits.withUnsafeMutableBytes { buffer in
            ioctl(device.fd.rawValue, UInt(cevdev_eviocgkey(UInt32(buffer.count))), buffer.baseAddress!)
        }
        guard rc >= 0 else { return nil }
        var down = Set<UInt16>()
        for (index, byte) in bits.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << bit) != 0 { down.insert(UInt16(index * 8 + bit)) }
        }
        return down
    }

    /// Reads what the desktop wrote to the twin (its `EV_LED` and `EV_SND` settings come back
    /// on the uinput fd) and writes those to the physical device, which lights its LEDs.
    ///
    /// A repeat rate set on the twin (EVIOCSREP: a compositor, `kbdrate`; it comes back as
    /// `EV_REP` events) would switch the kernel's software autorepeat on for the twin, on top
    /// of the physical device's repeats (value 2) that the twin forwards: every held key would
    /// repeat twice. So the rate goes to the physical device, whose repeats the twin forwards
    /// at that rate, and the twin's own repeat is switched off again at once
    /// (docs/virtual-device.md, "Autorepeat").
    ///
    /// Force feedback (docs/virtual-device.md, "Force feedback"): a game's `EVIOCSFF` or
    /// `EVIOCRMFF` on the twin waits in the kernel until evflowd answers the `EV_UINPUT`
    /// request that comes here; it is answered at once, in order, with what the physical device
    /// said (`answer`). `EV_FF` plays and stops come back as events and go to the physical
    /// device with its effect ids. Whatever was read before a request is written before it is
    /// answered, so a play followed by an erase reaches the device in that order.
    private func forwardFeedback() {
        guard let twin else { return }
        var events: [input_event] = []
        var rateSet = false
        var ev = input_event()
        while Glibc.read(twin.fd, &ev, MemoryLayout<input_event>.size) == MemoryLayout<input_event>.size {
            if ev.type == UInt16(EV_LED) || ev.type == UInt16(EV_SND) {
                events.append(ev)
            } else if ev.type == UInt16(EV_REP) && ev.value != 0 {
                // Our own switching-off comes back too, as a zero period: nothing to do for it.
                events.append(ev)
                rateSet = true
            } else if ev.type == UInt16(EV_FF) {
                if let play = forceFeedback.translate(ev) { events.append(play) }
            } else if ev.type == UInt16(EV_UINPUT) {
                writeToDevice(&events)
                answer(request: ev.code, id: ev.value, on: twin)
            }
        }
        if rateSet { twin.disableRepeat() }
        writeToDevice(&events)
    }

    /// Writes `events` to the physical device in one `write(2)` and empties it; a `SYN_REPORT`
    /// ends LED, sound and repeat settings (their frame), none follows `EV_FF` plays alone.
    private func writeToDevice(_ events: inout [input_event]) {
        defer { events.removeAll(keepingCapacity: true) }
        guard !events.isEmpty, let writeBack, !writeBack.isClosed else { return }
        if events.contains(where: { $0.type != UInt16(EV_FF) }) {
            var syn = input_event()
            syn.type = UInt16(EV_SYN)
            syn.code = UInt16(SYN_REPORT)
            events.append(syn)
        }
        _ = events.withUnsafeBytes { Glibc.write(writeBack.rawValue, $0.baseAddress, $0.count) }
    }

    /// Answers the twin's force-feedback request `id` (`code` `UI_FF_UPLOAD` or `UI_FF_ERASE`):
    /// fetches it (`UI_BEGIN_…`), has the relay forward it to the physical device, and ends it
    /// with the device's answer (`UI_END_…`), which the game's ioctl on the twin returns. A
    /// request that cannot be fetched (timed out in the kernel meanwhile) is left alone.
    /// Without the physical node open (it went) the answer is ENODEV.
    private func answer(request code: UInt16, id: Int32, on twin: VirtualDevice) {
        let target = PhysicalForceFeedback(fd: writeBack.map { $0.isClosed ? -1 : $0.rawValue } ?? -1)
        if code == UInt16(UI_FF_UPLOAD) {
            var request = uinput_ff_upload()
            request.request_id = UInt32(bitPattern: id)
            guard withUnsafeMutablePointer(to: &request, { ioctl(twin.fd, UInt(cevdev_ui_begin_ff_upload()), UnsafeMutableRawPointer($0)) }) == 0 else { return }
            forceFeedback.upload(&request, to: target)
            _ = withUnsafeMutablePointer(to: &request) { ioctl(twin.fd, UInt(cevdev_ui_end_ff_upload()), UnsafeMutableRawPointer($0)) }
        } else if code == UInt16(UI_FF_ERASE) {
            var request = uinput_ff_erase()
            request.request_id = UInt32(bitPattern: id)
            guard withUnsafeMutablePointer(to: &request, { ioctl(twin.fd, UInt(cevdev_ui_begin_ff_erase()), UnsafeMutableRawPointer($0)) }) == 0 else { return }
            forceFeedback.erase(&request, on: target)
            _ = withUnsafeMutablePointer(to: &request) { ioctl(twin.fd, UInt(cevdev_ui_end_ff_erase()), UnsafeMutableRawPointer($0)) }
        }
    }
}

/// The physical device's side of the force-feedback relay: `EVIOCSFF` and `EVIOCRMFF` on the
/// node evflowd opened for it (effects belong to the file that uploaded them: the same fd
/// erases them). A closed fd (-1) answers ENODEV.
struct PhysicalForceFeedback: ForceFeedbackTarget {
    let fd: Int32

    func upload(_ effect: inout ff_effect) -> Int32 {
        guard fd >= 0 else { return -ENODEV }
        var rc: Int32
        repeat { rc = withUnsafeMutablePointer(to: &effect) { ioctl(fd, UInt(cevdev_eviocsff()), UnsafeMutableRawPointer($0)) } } while rc < 0 && errno == EINTR
        return rc < 0 ? -errno : 0
    }

    func erase(_ id: Int16) -> Int32 {
        guard fd >= 0 else { return -ENODEV }
        var rc: Int32
        repeat { rc = ioctl(fd, UInt(cevdev_eviocrmff()), CInt(id)) } while rc < 0 && errno == EINTR
        return rc < 0 ? -errno : 0
    }
}
