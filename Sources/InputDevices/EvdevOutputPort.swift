import CEvdev
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// The live device's `DeviceOutputPort`: its twin (`VirtualDevice`), the grab, and the
/// write-back of the LEDs and sounds the desktop sets on the twin to the physical device.
///
/// Confined to the input thread (the hub calls it there). Holds the `EvdevDevice` (the
/// reader owns and closes its fd): when the device is gone, grabbing and ungrabbing are moot
/// (the kernel dropped the grab with the fd) and are skipped.
final class EvdevOutputPort: DeviceOutputPort, @unchecked Sendable {
    private let device: EvdevDevice
    private let loop: InputLoop
    private var twin: VirtualDevice?
    private var twinToken: InputLoop.Token?
    /// The physical node opened for writing, for the LED/SND write-back: only while a twin
    /// exists, so an observed device is never opened for writing.
    private var writeBack: FileDescriptor?
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

    var virtualRefusal: String? {
        libevdev_has_event_type(device.handle, UInt32(EV_FF)) == 1 ? "force feedback is not forwarded" : nil
    }

    func createTwin() throws(DeviceOutputError) -> String {
        if let twin { return twin.devnode }
        if let refusal = virtualRefusal { throw DeviceOutputError(.failed, refusal) }
        if device.fd.isClosed { throw DeviceOutputError(.failed, "\(device.path) is closed") }
        let twin: VirtualDevice
        do {
            twin = try VirtualDevice(cloning: device.handle)
        } catch {
            throw DeviceOutputError(.failed, error.description)
        }
        VirtualTwins.add(syspath: twin.syspath, devnode: twin.devnode)
        self.twin = twin
        // O_WRONLY: the write-back only writes. Without write access to the node (a unit that
        // allows the input nodes read-only) the twin still works, with LEDs left alone.
        let fd = Glibc.open(device.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        if fd >= 0 { writeBack = FileDescriptor(owning: fd) }
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
    private func forwardFeedback() {
        guard let twin else { return }
        var events: [input_event] = []
        var rate: [input_event] = []
        var ev = input_event()
        while Glibc.read(twin.fd, &ev, MemoryLayout<input_event>.size) == MemoryLayout<input_event>.size {
            if ev.type == UInt16(EV_LED) || ev.type == UInt16(EV_SND) { events.append(ev) }
            // Our own switching-off comes back too, as a zero period: nothing to do for it.
            if ev.type == UInt16(EV_REP) && ev.value != 0 { rate.append(ev) }
        }
        if !rate.isEmpty {
            twin.disableRepeat()
            events += rate
        }
        guard !events.isEmpty, let writeBack, !writeBack.isClosed else { return }
        var syn = input_event()
        syn.type = UInt16(EV_SYN)
        syn.code = UInt16(SYN_REPORT)
        events.append(syn)
        _ = events.withUnsafeBytes { Glibc.write(writeBack.rawValue, $0.baseAddress, $0.count) }
    }
}
